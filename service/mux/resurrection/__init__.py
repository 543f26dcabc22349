"""application-resurrection/1 (SPEC §6): per-launch endpoints, ownership, checkpoints."""
