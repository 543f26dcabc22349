"""OS-level helpers and library adapters: the bottom layer (see .importlinter)."""
