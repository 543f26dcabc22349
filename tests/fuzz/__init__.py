"""Fuzz tests: every D-Bus method mux serves, and the attach and resurrection decoders."""
