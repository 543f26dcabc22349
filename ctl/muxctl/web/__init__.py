"""`muxctl web`: mux in a browser (docs/web.md), served by its own process, never by muxd."""
