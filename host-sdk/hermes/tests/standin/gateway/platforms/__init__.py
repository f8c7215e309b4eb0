"""Stand-in for gateway.platforms."""
