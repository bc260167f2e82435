"""The required-data search (n_req, the least training data whose ID accuracy reaches 99%): probes, the bracketing
search, summaries, the book's experiments."""
