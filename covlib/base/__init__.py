"""Base layer: errors, paths, atomic files, locked result tables, the device, the paper's numbers."""
