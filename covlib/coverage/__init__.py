"""Coverage (SPEC 2): the paper's exact algorithm, the authors' variant, annotation, data it needs."""
