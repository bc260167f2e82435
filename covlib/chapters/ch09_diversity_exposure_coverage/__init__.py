"""Chapter 9 (the diversity audit): its runs, statistics and figures."""

# its modules, which the chapter's notebook calls through the package:
# `import covlib.chapters.ch09_diversity_exposure_coverage as ch09`, then `ch09.audit.PRESETS`
from covlib.chapters.ch09_diversity_exposure_coverage import audit, coverage_range, figures, stats

__all__ = ["audit", "coverage_range", "figures", "stats"]
