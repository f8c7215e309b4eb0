"""Stand-in for Hermes' tools package (see ../README.md)."""
