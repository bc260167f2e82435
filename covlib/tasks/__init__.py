"""The tasks (SPEC 1): their graphs of primitives, dataset generation, and the authors' on-disk format."""
