"""Federation: this muxd (the hub) drives the muxds of the same user on other machines
(satellites) over the user's own ssh (docs/federation.md)."""
