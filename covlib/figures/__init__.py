"""Figures (altair): one style for the book, and the charts several chapters share."""
