"""The attach data plane on `<runtime>/mux.sock` (SPEC §4)."""
