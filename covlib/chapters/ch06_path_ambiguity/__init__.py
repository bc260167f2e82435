"""Chapter 6 (path ambiguity): non-tree against two-hop in coverage, learning and representations."""

# what the chapter's notebook calls (`import covlib.chapters.ch06_path_ambiguity as ch06`): its modules
# (`ch06.searches.PRESETS`), and the few functions of covlib's layers it uses directly, one import away from
# where each is defined
from covlib.analyses.curves import combine_curves, final_value
from covlib.analyses.iicg import iicg_peaks
from covlib.analyses.residuals import open_shipped
from covlib.base.paper import NONTREE_FAILS_AT
from covlib.chapters.ch06_path_ambiguity import charts, coverage, data_need, inside, searches, shipped, summary, tables
from covlib.figures.charts import accuracy_curves_chart
from covlib.figures.heatmaps import layer_position_heatmap
from covlib.figures.required_data import required_data_chart, search_reader_table
from covlib.figures.style import pending_chart
from covlib.figures.tables import frame_table
from covlib.search.cells import ProbeRules
from covlib.search.experiments import experiment_command
from covlib.search.probes import read_probes
from covlib.search.required_data import search
from covlib.search.status import describe_cells, search_summary
from covlib.training.runs import load_metrics
from covlib.training.shipped import ensure_shipped

__all__ = [
    "NONTREE_FAILS_AT",
    "ProbeRules",
    "accuracy_curves_chart",
    "charts",
    "combine_curves",
    "coverage",
    "data_need",
    "describe_cells",
    "ensure_shipped",
    "experiment_command",
    "final_value",
    "frame_table",
    "iicg_peaks",
    "inside",
    "layer_position_heatmap",
    "load_metrics",
    "open_shipped",
    "pending_chart",
    "read_probes",
    "required_data_chart",
    "search",
    "search_reader_table",
    "search_summary",
    "searches",
    "shipped",
    "summary",
    "tables",
]

