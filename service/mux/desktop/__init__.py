"""The desktop: notifications from panes nobody is looking at, pane search for GNOME
Shell and KRunner, a snapshot before suspend (docs/desktop.md)."""
