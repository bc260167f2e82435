"""Chapter 8 (the taxonomy): symmetry and shared-operator reach, and their models."""
