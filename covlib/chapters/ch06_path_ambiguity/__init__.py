"""Chapter 6 (path ambiguity): non-tree against two-hop in coverage, learning and representations."""
