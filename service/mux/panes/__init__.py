"""PTY panes: process creation, output and input, exit tracking, and the pane table."""
