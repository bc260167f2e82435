"""The required-data search (SPEC 5.2): probes, the bracketing search, summaries, the book's experiments."""
