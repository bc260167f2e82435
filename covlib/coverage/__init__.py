"""Coverage as the paper defines it (k-coverage): its exact algorithm, the authors' variant, annotation, the data
it needs."""
