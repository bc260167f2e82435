"""Chapter 4's test of the give-up rule: its exponents under the authors' rule and the step floor, and its two-hop
requirement at the N the paper publishes (the reader's tables and prose are covlib.figures.give_up_rule's)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from covlib.base.paper import EXPONENTS_WITH_MAMBA, REQUIRED_DATA_TWOHOP_AUTHORS
from covlib.figures.give_up_rule import (  # noqa: F401 (the notebook reaches them here)
    chosen_floor,
    exponents_view,
    flips_view,
    one_rule_note,
    paper_span_note,
    pattern_note,
    reader_name,
    rule_counts_metrics,
    slopes_table,
    slopes_view,
    verdicts_bullet,
)
from covlib.figures.longer_floor import (  # noqa: F401 (the notebook's)
    longer_floor_command,
    longer_floor_metrics,
    longer_floor_note,
)
from covlib.figures.patience import (  # noqa: F401 (the notebook's)
    lower_end_note,
    lower_ends,
    lower_ends_chart,
    patience_bullet,
    patience_metrics,
    patience_note,
    patience_view,
)
from covlib.figures.tables import ReaderTable, reader_table
from covlib.search.cells import Cell
from covlib.search.longer_floor import LONGER_FLOOR, longer_floor_cells, longer_floor_test  # noqa: F401 (the notebook's)
from covlib.search.patience import success_life_table  # noqa: F401 (the notebook's)
from covlib.search.recheck import BOOK_FLOOR, floor_recheck, rerun_minutes  # noqa: F401 (the notebook's)
from covlib.search.verdicts import exponents_by_rule, rule_metrics, verdict_table  # noqa: F401 (the notebook's)

# chapter 4's exponents (experiment names of covlib.search.experiments) and the paper's value for each
RULE_EXPONENTS = EXPONENTS_WITH_MAMBA
# the tasks those exponents rest on, as flip_counts keys them (the Mamba's cells are two-hop's)
RULE_TASKS = ["twohop", "threehop", "parallel_twohop"]


def rule_exponents(cells_of: Mapping[str, Sequence[Cell]], probes: pd.DataFrame, reps: int,
                   paper: Mapping[str, float] = RULE_EXPONENTS, floor: int = BOOK_FLOOR,
                   floor_only: Mapping[str, Sequence[Cell]] | None = None) -> pd.DataFrame:
    """exponents_by_rule for the chapter's exponents, under the authors' rule and the floor (``floor_only``: the
    cells of ``cells_of`` the floor alone searches)."""
    return exponents_by_rule({n: cells_of[n] for n in paper if n in cells_of}, probes, [0, floor], paper, reps,
                             floor_only)


def largest_n_comparison(twohop: pd.DataFrame, required: Mapping[int, float] = REQUIRED_DATA_TWOHOP_AUTHORS
                         ) -> pd.DataFrame:
    """The book's two-hop n_req (mean over finished seeds) at every N where the paper publishes one too."""
    done = twohop.dropna(subset=["n_req"]) if len(twohop) else twohop
    rows = []
    for N, paper in required.items():
        cell = done[done["N"] == N] if len(done) else done
        book = float(np.exp(np.log(cell["n_req"].astype(float)).mean())) if len(cell) else np.nan
        rows.append({"N": N, "book": book, "seeds": len(cell), "paper": paper, "ratio": book / paper})
    return pd.DataFrame(rows)


def largest_n_view(comparison: pd.DataFrame) -> ReaderTable:
    shown = comparison.assign(book_text=[f"{b:,.0f}" if b == b else "not measured yet" for b in comparison["book"]])
    return reader_table(shown, {"N": "N", "book_text": "n_req here (geometric mean over seeds)", "seeds": "seeds",
                                "paper": "n_req, the paper's models", "ratio": "here / paper"},
                        formats={"paper": ",.0f", "ratio": ".2f"})
