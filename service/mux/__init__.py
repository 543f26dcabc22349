"""mux: a per-user terminal session service."""

__version__ = "0.1.0"
