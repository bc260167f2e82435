"""Chapter 9 (the diversity audit): its runs, statistics and figures."""
