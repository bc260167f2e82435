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


def summary_view(summary: pd.DataFrame, caption: str) -> ReaderTable:
    """series_summary per task: cells, N, how many within 1.15x and 1.25x, the median and range of measured over
    predicted, the drift with N, and (out of sample) the choices of the rule that predicted it."""
    columns = {"series": "task", "cells": "cells", "N": "N", "within_115": "within 1.15x", "within_125": "within 1.25x",
               "median": "median measured / predicted", "ratio_min": "smallest", "ratio_max": "largest",
               "drift": "drift (exponent, measured minus predicted)"}
    if "rule" in summary:
        columns["rule"] = "rule that predicted it (fitted without it)"
    return reader_table(summary, columns, formats={"median": ".2f", "ratio_min": ".2f", "ratio_max": ".2f",
                                                   "drift": "+.2f"}, caption=caption)


def protocol_view(comparison: pd.DataFrame) -> ReaderTable:
    """protocol_comparison: the rule each give-up rule's cells fit, and its out-of-sample accuracy."""
    return reader_table(comparison, {"protocol": "cells measured under", "rule": "rule fitted on every task",
                                     "cells": "cells out of sample", "within_115": "within 1.15x",
                                     "within_125": "within 1.25x", "worst median": "median furthest from 1"},
                        formats={"within_115": ".0%", "within_125": ".0%", "worst median": ".2f"})


def inflation_view(inflation: pd.DataFrame) -> ReaderTable:
    """coincidence_inflation per task and N: the crossings of the paper's coverage and of coverage through true
    equivalences, and their ratio."""
    return reader_table(inflation, {"task": "task", "N": "N", "paper": "paper's coverage (examples)",
                                    "sound": "true equivalences only (examples)",
                                    "inflation": "ratio: the data coincidences save"},
                        formats={"paper": EXAMPLES, "sound": EXAMPLES, "inflation": ".2f"})


def coincidence_view(table: pd.DataFrame) -> ReaderTable:
    """coincidences_by_type: per task, N and training-set size, the share of ID and OOD test items k-covered by
    the paper's definition and through true equivalences only."""
    return reader_table(table, {"task": "task", "N": "N", "n_train": "training examples", "k": "k",
                                "id_paper": "ID covered (paper)", "id_sound": "ID covered (true equivalences)",
                                "ood_paper": "OOD covered (paper)", "ood_sound": "OOD covered (true equivalences)"},
                        formats={"n_train": EXAMPLES, "id_paper": ".1%", "id_sound": ".1%", "ood_paper": ".1%",
                                 "ood_sound": ".1%"})


def drift_view(drift: pd.DataFrame) -> ReaderTable:
    """What parallel two-hop's drift follows: the exponent of each quantity over the same N."""
    return reader_table(drift, {"quantity": "quantity", "exponent": "exponent of N", "N": "N", "cells": "cells"},
                        formats={"exponent": ".2f"})


def preregistered_view(table: pd.DataFrame) -> ReaderTable:
    """The predictions written before any probe of their tasks, with the measurement where the search has finished
    it (empty until then)."""
    return reader_table(table, {"task": "task", "N": "N", "n_pred": "predicted n_req (median, examples)",
                                "n_low": "lowest seed", "n_high": "highest seed", "eligible": "ID pool (inputs)",
                                "measured": "measured n_req (median of seeds)", "ratio": "measured / predicted"},
                        formats={"n_pred": EXAMPLES, "n_low": EXAMPLES, "n_high": EXAMPLES, "measured": EXAMPLES,
                                 "ratio": ".2f"})


def _larger_by_seed(larger: str) -> str:
    """"hop facts hop facts k-coverage" (one per seed) as "hop facts in 2 seeds, k-coverage in 1"; one evidence
    alone as "hop facts, every seed"."""
    counts = {name: larger.count(name) for name in ("hop facts", "k-coverage") if name in larger}
    if len(counts) == 1:
        return f"{next(iter(counts))}, every seed"
    return ", ".join(f"{name} in {n} seed{'s' if n != 1 else ''}" for name, n in counts.items())


def amended_view(table: pd.DataFrame) -> ReaderTable:
    """The amended rule's predictions, which evidence was the larger, whether a pair is in sample for it, and the
    measurement where the search has finished it."""
    shown = table.assign(in_sample=table["in_sample"].astype(bool).map({True: "yes", False: "no"}),
                         larger=table["larger"].map(_larger_by_seed))
    return reader_table(shown, {"task": "task", "N": "N", "n_pred": "amended prediction (median, examples)",
                                "larger": "the larger evidence, per seed", "in_sample": "in sample for it",
                                "measured": "measured n_req (median of seeds)", "ratio": "measured / amended"},
                        formats={"n_pred": EXAMPLES, "measured": EXAMPLES, "ratio": ".2f"})


def findings_markdown(findings: str) -> str:
    """readings.findings (one finding per line) as a bullet list."""
    return "\n".join(f"* {line}" for line in findings.splitlines() if line.strip())
