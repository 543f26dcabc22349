"""application-resurrection/1 (docs/resurrection-protocol.md): per-launch endpoints,
ownership, checkpoints."""
