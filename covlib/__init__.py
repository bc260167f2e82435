"""covlib: tasks, data, coverage, training and analyses for the Coverage Principle book."""
__version__ = "0.1.0"
