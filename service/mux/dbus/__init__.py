"""The D-Bus face of the service: thin interface classes over the pane table."""
