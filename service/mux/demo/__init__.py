"""Small programs that show mux's protocols at work."""
