"""What the reader sees: each table chapter 4 shows, with headers that say what a column is."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import altair as alt
import pandas as pd
from IPython.display import Markdown

from covlib.chapters.ch04_how_much_data.searches import cache_status
from covlib.figures.give_up_rule import reader_name
from covlib.figures.required_data import estimates_chart
from covlib.figures.tables import ReaderTable, reader_table

NO_ESTIMATE = ("No cell of {} is bracketed at this preset, so there is no estimate to plot; the table says how far "
               "each search got.")


def estimates_figure(save: Callable[[alt.TopLevelMixin, str], alt.TopLevelMixin], points: Sequence, title: str,
                     name: str, none_note: str, ready: bool = True) -> alt.TopLevelMixin | Markdown:
    """A comparison's required-data chart (covlib.figures.required_data.estimates_chart of ``points``), saved as
    ``name`` by ``save`` and returned to show; where there is nothing to plot yet (no points, or not ``ready``), the
    note that says so."""
    if points and ready:
        return save(estimates_chart(points, title), name)
    return Markdown(none_note)

PROBE_COLUMNS = {"task": "task", "N": "N", "model": "model", "seed": "seed", "n_train": "training examples",
                 "success": "reached the threshold", "stopped": "stopped by",
                 "steps": "steps", "best_type0": "best ID accuracy", "final_train": "final training accuracy",
                 "minutes": "minutes"}


def probes_view(probes: pd.DataFrame, caption: str | None = None) -> ReaderTable:
    """Rows of the probe table for the reader."""
    return reader_table(probes, PROBE_COLUMNS, formats={"best_type0": ".1%", "final_train": ".1%", "minutes": ".1f"},
                        caption=caption)


def cache_status_view(summaries: Mapping[str, pd.DataFrame]) -> ReaderTable:
    """``cache_status`` for the reader."""
    return reader_table(cache_status(summaries), {"experiment": "experiment", "cells": "cells in the cache"})


CELL_COLUMNS = {"N": "N", "seed": "seed", "status": "search", "low": "largest failing n", "high": "smallest succeeding n",
                "n_req": "n_req (estimate)", "next_n": "next n to probe", "probes": "probes",
                "eligible": "ID-eligible inputs", "low_capped": "failing probe stopped by the step cap",
                "minutes": "run minutes"}


def cells_view(summary: pd.DataFrame) -> ReaderTable:
    """A search summary (one row per cell) for the reader; n_req is the bracket's geometric mean."""
    columns = {c: h for c, h in CELL_COLUMNS.items() if c in summary}
    return reader_table(summary, columns or {c: c for c in summary.columns})


def pool_view(id_pool: pd.DataFrame) -> ReaderTable:
    """``pool_shares`` for the reader: the required data against the ID pool."""
    return reader_table(id_pool, {"N": "N", "seed": "seed", "low": "largest failing n", "high": "smallest succeeding n",
                                  "n_req": "n_req (estimate)", "eligible": "ID-eligible inputs (the pool)",
                                  "share_of_pool": "n_req / pool", "low_capped": "failing probe stopped by the step cap",
                                  "probes": "probes", "minutes": "run minutes"},
                        formats={"share_of_pool": ".1%"})


def coverage_fits_view(cov_fit: pd.DataFrame) -> ReaderTable:
    """``coverage_fits`` for the reader."""
    columns = {"k": "k", "target": "share of ID items covered", "c": "exponent c", "r2": "R²", "N range": "N range",
               "theory 2.5 - 0.5/k": "theory 2.5 - 0.5/k"}
    if not len(cov_fit):
        cov_fit = pd.DataFrame(columns=list(columns))
    return reader_table(cov_fit, columns, formats={"target": ".0%", "c": ".2f", "r2": ".3f", "theory 2.5 - 0.5/k": ".2f"})


def exponent_view(comparison: pd.DataFrame) -> ReaderTable:
    """``exponent_comparison`` for the reader (the interval only where there is one)."""
    ranged = comparison.assign(interval=[f"{lo:.2f} to {hi:.2f}" if pd.notna(lo) and lo != hi else ""
                                         for lo, hi in zip(comparison["c_low"], comparison["c_high"])])
    return reader_table(ranged, {"what": "exponent", "c": "c", "interval": "95% interval", "source": "source"},
                        formats={"c": ".2f"})


def sizes_view(sizes: pd.DataFrame) -> ReaderTable:
    """``size_table`` for the reader."""
    columns = {"model": "model", "parameters": "parameters", "cells finished": "cells finished", "cells": "cells",
               "exponent": "exponent c", "interval": "95% interval", "mean n_req": "mean n_req",
               "unreachable at N": "no success at N", "capped at N": "capped at N"}
    if not len(sizes):
        sizes = pd.DataFrame(columns=list(columns))
    return reader_table(sizes, columns, formats={"exponent": ".2f", "mean n_req": ",.0f"})


def architectures_view(models: pd.DataFrame) -> ReaderTable:
    """``size_table`` over architectures, for the reader."""
    columns = {"model": "model", "family": "architecture", "parameters": "parameters",
               "cells finished": "cells finished", "cells": "cells", "N values": "values of N", "seeds": "seeds",
               "exponent": "exponent c", "interval": "95% interval", "mean n_req": "mean n_req",
               "unreachable at N": "no success at N"}
    if not len(models):
        models = pd.DataFrame(columns=list(columns))
    return reader_table(models, columns, formats={"parameters": ",.0f", "exponent": ".2f", "mean n_req": ",.0f"},
                        caption="Each architecture on the Mamba's cells (two-hop, the same N and seeds)")


def chains_view(chains: pd.DataFrame) -> ReaderTable:
    """``chain_table`` for the reader."""
    chains = chains.assign(task=chains["task"].map(reader_name))
    return reader_table(chains, {"task": "task", "N values": "N values", "exponent": "exponent c",
                                 "interval": "95% interval", "seeds": "seeds", "paper": "paper's c",
                                 "finished cells": "finished cells", "cells": "of cells"},
                        formats={"exponent": ".2f", "paper": ".2f"})


def ratios_by_rule_view(by_rule: pd.DataFrame, reference: str) -> ReaderTable:
    """``ratios_by_rule`` for the reader: each model against ``reference`` under both give-up rules."""
    shown = by_rule.assign(verdict=[v or ("waits for " + p if p else "") for v, p in zip(by_rule["verdict"],
                                                                                        by_rule["pending"])])
    return reader_table(shown, {"model": "model", "rule": "give-up rule", "cells": "cells both finished",
                                "per cell": "ratio per cell", "ratio": f"n_req / {reference}'s (geometric mean)",
                                "seed gap": "typical gap between two seeds", "verdict": "needs"},
                        formats={"ratio": ".2f", "seed gap": ".2f"},
                        caption=f"Each model's required data over {reference}'s, under both give-up rules")
