"""Everything mux keeps on disk: durable writes, quarantine, the snapshot schema."""
