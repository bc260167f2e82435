"""Training: model shapes and configs, batches, evaluation, the loop, run folders, shipped runs, the pool."""
