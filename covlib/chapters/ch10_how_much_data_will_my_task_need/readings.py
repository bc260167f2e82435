"""Chapter 10's numbers: its metrics, the exercise's check, and the closing findings."""
from __future__ import annotations

import numpy as np
import pandas as pd

from covlib.figures.exercises import check_share

SET_KEYS = {"two-hop": "twohop", "three-hop": "threehop", "parallel two-hop": "parallel_twohop",
            "two-hop, CoT": "twohop_cot", "three-hop, CoT": "threehop_cot", "two-hop, Mamba": "twohop_mamba",
            "authors' two-hop (GPT-2)": "authors"}


def within_share(ratios: pd.Series, band: float) -> float:
    """Share of ratios inside [1/band, band] (NaN for none)."""
    r = np.asarray(ratios, float)
    return float(((r <= band) & (r >= 1 / band)).mean()) if len(r) else float("nan")


def chapter_metrics(rule: dict, ranges: pd.DataFrame, tested: pd.DataFrame, authors: pd.DataFrame, band: float,
                    seconds_200: float | None, rule_text: str) -> dict:
    """What the chapter records (covlib.book.sweep.record_metrics)."""
    out: dict = {"predict_rule": rule_text, "predict_rule_fitted_on": SET_KEYS.get(rule.get("fitted_on"), "none")}
    for _, r in ranges.iterrows():
        key = SET_KEYS.get(r["set"], r["set"])
        out[f"predict_ratio_{key}_min"] = round(r["ratio_min"], 3)
        out[f"predict_ratio_{key}_max"] = round(r["ratio_max"], 3)
    out["predict_within_115_share"] = round(within_share(tested["ratio"], band), 3)
    if len(authors):
        out["predict_ratio_authors_min"] = round(float(authors["ratio"].min()), 3)
        out["predict_ratio_authors_max"] = round(float(authors["ratio"].max()), 3)
    if seconds_200 is not None:
        out["predict_seconds_twohop_N200"] = round(float(seconds_200), 1)
    return out


def raw_within_share(ratios: pd.DataFrame, rule: dict, band: float, fit_set: str = "two-hop") -> float:
    """The exercise's truth: the share of ``fit_set``'s cells within the band of the raw crossing (factor 1) at the
    rule's k and share."""
    at = ratios[(ratios["set"] == fit_set) & (ratios["k"] == rule["k"]) & (ratios["target"] == rule["target"])]
    return within_share(at["n_req"] / at["crossing"], band)


def check_raw_within(answer, truth: float, band: float) -> str:
    """The exercise's check: the share of two-hop's cells within the band of the raw crossing (factor 1)."""
    return check_share(answer, truth, f"the share of two-hop cells within {band:g}x of the raw crossing",
                       "divide each two-hop cell's n_req by its crossing at the rule's k and share (in `ratios`) "
                       f"and count the ratios between 1/{band:g} and {band:g}", tol=0.005, name="my_raw_within",
                       hint="keep only two-hop's rows at the rule's k and target, and count a ratio inside the band "
                            "in either direction.")


def findings(rule_text: str, ranges: pd.DataFrame, tested: pd.DataFrame, authors: pd.DataFrame, band: float) -> str:
    """The closing summary: the rule, each set's ratio range and the share of cells within the band."""
    lines = [f"Rule (fitted on two-hop's cells alone): n_req = {rule_text}."]
    for _, r in ranges.iterrows():
        lines.append(f"{r['set']}: {r['cells']} cells, N = {r['N']}, measured / predicted {r['ratio_min']:.2f}-"
                     f"{r['ratio_max']:.2f}, {r['within']} within {band:g}x; give-up rule: {r['give-up rule']}.")
    if len(authors) and not ranges["set"].astype(str).str.contains("authors").any():  # not already a set above
        lines.append(f"The authors' two-hop models (N = {', '.join(str(int(n)) for n in authors['N'])}): "
                     f"{authors['ratio'].min():.2f}-{authors['ratio'].max():.2f}.")
    lines.append(f"Cells within {band:g}x: {within_share(tested['ratio'], band):.0%} of {len(tested)}.")
    return "\n".join(lines)
