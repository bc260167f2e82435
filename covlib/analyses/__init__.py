"""Analyses of trained models and their runs: curves, residual streams, IICG, tracing, logit lens, fits."""
