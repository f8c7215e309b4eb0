"""Stand-in for Hermes' gateway package (see ../README.md)."""
