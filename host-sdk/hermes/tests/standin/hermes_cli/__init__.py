"""Stand-in for Hermes' hermes_cli package (see ../README.md)."""
