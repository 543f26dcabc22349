"""The service's lifecycle: start, serve, upgrade, stop (the top layer)."""
