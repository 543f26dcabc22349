"""muxctl: the command-line client of the mux service."""
