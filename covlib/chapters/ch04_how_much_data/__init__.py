"""Chapter 4 (how much data): the required data of two-hop and longer chains, its exponent, model sizes
and architectures."""

# what the chapter's notebook calls: its modules, and the few functions of covlib's layers it uses directly
from covlib.analyses.fits import describe_exponent, exponent_metrics, power_fit, summary_exponent
from covlib.base.paper import theory_exponent
from covlib.base.paths import readable_path, repository_path
from covlib.chapters.ch04_how_much_data import (
    exercises,
    explore,
    failing_probes,
    findings,
    give_up_rule,
    longer_chains,
    model_comparison,
    searches,
    twohop_law,
    verdict_rule,
    views,
)
from covlib.chapters.ch04_how_much_data.searches import PRESETS
from covlib.figures import reproduction
from covlib.figures.required_data import estimates_chart
from covlib.figures.text import fmt, run_time
from covlib.figures.verdicts_chart import verdicts_chart
from covlib.search.cells import ProbeRules
from covlib.search.experiments import authors_rule_cells, experiment_cells, floor_only_cells
from covlib.search.probes import read_curves, read_probes
from covlib.search.reproduction import reproduce
from covlib.search.summary import bracket_pair, geometric_mean, seed_spread

__all__ = [
    "authors_rule_cells",
    "bracket_pair",
    "describe_exponent",
    "estimates_chart",
    "exercises",
    "experiment_cells",
    "explore",
    "exponent_metrics",
    "failing_probes",
    "findings",
    "floor_only_cells",
    "fmt",
    "geometric_mean",
    "give_up_rule",
    "longer_chains",
    "model_comparison",
    "reproduce",
    "reproduction",
    "power_fit",
    "PRESETS",
    "ProbeRules",
    "read_curves",
    "read_probes",
    "readable_path",
    "repository_path",
    "run_time",
    "searches",
    "seed_spread",
    "summary_exponent",
    "theory_exponent",
    "twohop_law",
    "verdict_rule",
    "views",
    "verdicts_chart",
]
