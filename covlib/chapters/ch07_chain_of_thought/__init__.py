"""Chapter 7 (chain of thought): required data with the bridge written out, decoding, IICG over the sequence."""

# what the chapter's notebook calls: its modules, and the few functions of covlib's layers it uses directly
from covlib.analyses.fits import summary_exponent
from covlib.analyses.residuals import open_shipped
from covlib.base.paper import COT_DATA_RATIO
from covlib.chapters.ch07_chain_of_thought import (
    curves,
    data_ratios,
    greedy,
    inside,
    searches,
    shipped,
    summary,
    tables,
)
from covlib.figures import reproduction
from covlib.figures.give_up_rule import (
    chosen_floor,
    exponents_view,
    pattern_note,
    reader_name,
    rule_counts_metrics,
    slopes_table,
    slopes_view,
    verdicts_bullet,
)
from covlib.figures.patience import lower_end_note, lower_ends
from covlib.figures.required_data import search_reader_table
from covlib.figures.style import pending_chart
from covlib.figures.tables import frame_table
from covlib.figures.verdicts_chart import verdicts_chart
from covlib.search.experiments import (
    authors_rule_cells,
    experiment_cells,
    experiment_command,
    floor_only_cells,
    floor_only_N,
)
from covlib.search.probes import read_curves, read_probes
from covlib.search.recheck import floor_recheck, rerun_minutes
from covlib.search.reproduction import reproduce
from covlib.search.required_data import search
from covlib.search.status import describe_cells, search_summary
from covlib.search.summary import seed_spread
from covlib.search.verdicts import exponents_by_rule, rule_label, rule_metrics, verdict_table
from covlib.training.runs import load_metrics
from covlib.training.shipped import ensure_shipped

__all__ = [
    "chosen_floor",
    "COT_DATA_RATIO",
    "curves",
    "data_ratios",
    "describe_cells",
    "ensure_shipped",
    "authors_rule_cells",
    "experiment_cells",
    "experiment_command",
    "floor_only_N",
    "floor_only_cells",
    "exponents_by_rule",
    "exponents_view",
    "floor_recheck",
    "frame_table",
    "greedy",
    "inside",
    "load_metrics",
    "lower_end_note",
    "lower_ends",
    "open_shipped",
    "pattern_note",
    "pending_chart",
    "read_curves",
    "read_probes",
    "reader_name",
    "reproduce",
    "reproduction",
    "rerun_minutes",
    "rule_counts_metrics",
    "rule_label",
    "rule_metrics",
    "search",
    "search_reader_table",
    "search_summary",
    "searches",
    "seed_spread",
    "shipped",
    "slopes_table",
    "slopes_view",
    "summary",
    "summary_exponent",
    "tables",
    "verdicts_bullet",
    "verdict_table",
    "verdicts_chart",
]
