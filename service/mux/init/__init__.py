"""How the service meets its environment: buses, readiness, process lifecycle."""
