"""Chapter 10's tables as a reader sees them: headers that say what each column is, with its unit, no index, counts
of examples as whole numbers, and missing predictions as empty cells."""
from __future__ import annotations

import pandas as pd

from covlib.figures.tables import ReaderTable, reader_table

EXAMPLES = ",.0f"  # training examples are counted, never fractional


def prediction_view(prediction: pd.DataFrame, cpu: bool = True) -> ReaderTable:
    """predict_requirement's rows: the predicted n_req per N, its range over the seeds, the pool and the time."""
    columns = {"N": "N (tokens)", "n_pred": "predicted n_req (examples)", "n_low": "lowest seed",
               "n_high": "highest seed", "eligible": "ID pool (inputs)", "probes": "datasets generated",
               "seconds": "wall seconds"}
    if cpu:
        columns["cpu_seconds"] = "CPU seconds"
    return reader_table(prediction, columns, formats={"n_pred": EXAMPLES, "n_low": EXAMPLES, "n_high": EXAMPLES,
                                                      "seconds": ".1f", "cpu_seconds": ".1f"})


def candidates_view(candidates: pd.DataFrame) -> ReaderTable:
    """fit_rule's candidates: the spread (largest over smallest ratio) on two-hop's cells per k and share covered."""
    wide = candidates.pivot(index="k", columns="target", values="spread").reset_index()
    shares = [c for c in wide.columns if c != "k"]
    return reader_table(wide, {"k": "k", **{s: f"{s:.0%} covered" for s in shares}},
                        formats={s: ".2f" for s in shares},
                        caption="Spread of measured / crossing over two-hop's cells (largest over smallest)")


def ranges_view(ranges: pd.DataFrame, band: float) -> ReaderTable:
    """ratio_ranges per set: cells, N, the smallest and largest ratio, how many within the band, the drift."""
    return reader_table(ranges, {"set": "task", "cells": "cells", "N": "N", "ratio_min": "smallest measured / predicted",
                                 "ratio_max": "largest", "within": f"within {band:g}x",
                                 "drift": "drift (exponent, measured minus predicted)", "give-up rule": "give-up rule"},
                        formats={"ratio_min": ".2f", "ratio_max": ".2f", "drift": "+.2f"})


def depth_view(depth: pd.DataFrame) -> ReaderTable:
    """depth_each_set_needs per set: the k that centres it best, its typical ratio and range, the factor it would need
    at the rule's k, and whether that k is the last candidate."""
    return reader_table(depth, {"set": "task", "k": "k that centres it", "typical ratio": "typical ratio",
                                "range": "range", "factor at the rule's k": "factor it needs at the rule's k",
                                "at the edge": "k at the candidates' edge", "cells": "cells"},
                        formats={"typical ratio": ".2f", "factor at the rule's k": ".2f"})


def findings_markdown(findings: str) -> str:
    """readings.findings (one finding per line) as a bullet list."""
    return "\n".join(f"* {line}" for line in findings.splitlines() if line.strip())
