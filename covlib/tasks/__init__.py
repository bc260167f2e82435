"""The paper's synthetic tasks: their graphs of primitives, dataset generation, and the authors' on-disk format."""
