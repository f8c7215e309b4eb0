"""go-plugin's own services (broker, controller, stdio), generated from
goplugin.proto by ``make proto``."""
