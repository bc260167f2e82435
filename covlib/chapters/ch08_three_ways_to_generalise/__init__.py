"""Chapter 8 (the taxonomy): symmetry and shared-operator reach, and their models."""

# its modules, which the chapter's notebook calls through the package:
# `import covlib.chapters.ch08_three_ways_to_generalise as ch08`, then `ch08.reach.symmetry_reach(...)`
from covlib.chapters.ch08_three_ways_to_generalise import (
    charts,
    exercises,
    model_runs,
    reach,
    readings,
    reuse,
    roles,
    tables,
)

__all__ = ["charts", "exercises", "model_runs", "reach", "readings", "reuse", "roles", "tables"]
