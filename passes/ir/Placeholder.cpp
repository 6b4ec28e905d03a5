// Replaced by the graph IR sources.
