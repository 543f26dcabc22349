"""The attach data plane on `<runtime>/mux.sock` (docs/attach-protocol.md)."""
