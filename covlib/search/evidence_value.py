"""Where would more compute decide a verdict? The verdicts a CPU-hour is expected to change, and the expected
narrowing of a decisive interval per CPU-hour.

A candidate is a new N for one series (searched on both seeds under the floor). Its cells are simulated from the
series' own headline fit (its power law, its scatter about it, its cells' own uncertainty), the fit is redone with
them, and the expected 90% interval of the exponent and of each claim that reads the series is set against the
interval today, and each verdict redone on every draw against today's. The new cells follow today's fit: a verdict
changes by a narrower interval or by the scatter of the new cells, never by a law the table does not show. Its cost
is the probes a search of a new cell takes in that series (their mean count per cell) at the minutes its probes
took, scaled to the predicted size along the series' own minutes against n_train."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from covlib.analyses.fits import exponent_intervals, power_fit
from covlib.search.reproduction import CLAIMS, PAPER, SERIES, claim_result, fit_verdict, headline_input

# one slope of log minutes on log n_train per series, kept within what the table's series show: five-hop CoT's own
# fit is negative (its small sets train longest), which would make a larger set look free
MINUTES_SLOPE_RANGE = (0.3, 1.2)


def probe_minutes(probes: pd.DataFrame, spec: tuple[str, bool, str], n_train: float) -> tuple[float, float]:
    """(minutes of one probe at ``n_train``, probes a new cell's search takes) for a series, from its rows of the
    probe table (search probes only)."""
    task, cot, model = spec
    rows = probes[(probes["task"] == task) & (probes["cot"].astype(bool) == cot) & (probes["model"] == model)]
    x, y = np.log(rows["n_train"].astype(float)), np.log(rows["minutes"].astype(float).clip(lower=0.1))
    slope = float(np.clip(np.polyfit(x, y, 1)[0], *MINUTES_SLOPE_RANGE)) if x.nunique() > 1 else 1.0
    top = rows[rows["N"] >= sorted(rows["N"].unique())[-min(2, rows["N"].nunique())]]
    base_n, base_minutes = np.exp(np.log(top["n_train"]).mean()), np.exp(np.log(top["minutes"].clip(lower=0.1)).mean())
    per_cell = len(rows) / max(rows.groupby(["N", "seed"]).ngroups, 1)
    return float(base_minutes * (n_train / base_n) ** slope), float(per_cell)


def _simulated(est: pd.DataFrame, N: int, seeds: Sequence[int], rng: np.random.Generator) -> pd.DataFrame:
    """New cells at N for a series: its power law's prediction, plus its scatter about the law."""
    fit = power_fit(est["N"], est["n_req"])
    scatter = np.std(np.log(est["n_req"]) - np.log(fit["a"] * est["N"].astype(float) ** fit["c"]), ddof=2)
    sd = float(est["log_sd"].median()) if "log_sd" in est else 0.0
    log_n = np.log(fit["a"] * N ** fit["c"]) + rng.normal(0, scatter, len(seeds))
    return pd.DataFrame({"N": N, "seed": list(seeds), "n_req": np.exp(log_n), "log_sd": sd})


def candidate_value(by_rule: Mapping[str, pd.DataFrame], probes: pd.DataFrame, name: str, N: int,
                    seeds: Sequence[int] = (0, 1), draws: int = 20, reps: int = 1000, seed: int = 0) -> dict:
    """One candidate (series ``name`` at a new ``N``): today's and the expected 90% interval width of the series'
    exponent and of every claim that reads it, the predicted n_req, the CPU-hours, the narrowing per CPU-hour (of
    the exponent's width, and of the widest claim it touches), and what the step decides: the share of draws in
    which the exponent's verdict, and each claim's, comes out other than today's, and their sum per CPU-hour (the
    verdicts one CPU-hour is expected to change)."""
    spec = SERIES[name]
    inputs = {c: headline_input(by_rule, SERIES[c]) for c in SERIES}
    est = inputs[name]
    rng = np.random.default_rng(seed)
    fit = power_fit(est["N"], est["n_req"])
    n_pred = float(fit["a"] * N ** fit["c"])
    paper = PAPER.get(name, np.nan)
    now = exponent_intervals(est, (0.90, 0.95), reps=reps)
    verdict_now = fit_verdict(now["c"], now, paper)
    touched = [c for c in CLAIMS if name in (c.first, c.second, c.third)]
    claim_now = {c.name: claim_result(c, inputs, reps) for c in touched}
    widths, changed, claim_after = [], [], {c.name: [] for c in touched}
    for _ in range(draws):
        more = pd.concat([est, _simulated(est, N, seeds, rng)], ignore_index=True)
        after = exponent_intervals(more, (0.90, 0.95), reps=reps, seed=int(rng.integers(1 << 30)))
        widths.append(after["ci90_high"] - after["ci90_low"])
        changed.append(fit_verdict(after["c"], after, paper) != verdict_now)
        for claim in touched:
            claim_after[claim.name].append(claim_result(claim, inputs | {name: more}, reps))
    minutes, per_cell = probe_minutes(probes, spec, n_pred)
    hours = minutes * per_cell * len(seeds) / 60
    width_now = now["ci90_high"] - now["ci90_low"]
    width_after = float(np.nanmean(widths))
    claim_gain = {k: _width(claim_now[k]) - _finite_mean([_width(r) for r in v]) for k, v in claim_after.items()}
    claim_changes = {k: float(np.mean([r["verdict"] != claim_now[k]["verdict"] for r in v]))
                     for k, v in claim_after.items()}
    exponent_changes = float(np.mean(changed)) if np.isfinite(paper) else 0.0
    return {"series": name, "N": N, "seeds": len(seeds), "n_req_predicted": n_pred, "cpu_hours": hours,
            "width_now": width_now, "width_after": width_after, "narrowing": width_now - width_after,
            "narrowing_per_cpu_hour": (width_now - width_after) / hours,
            "claims": ", ".join(f"{k} {_width(claim_now[k]):.2f} to {_width(claim_now[k]) - g:.2f}"
                                for k, g in claim_gain.items() if np.isfinite(g)),
            "claim_narrowing_per_cpu_hour": max((g for g in claim_gain.values() if np.isfinite(g)), default=np.nan)
            / hours,
            "verdict_now": verdict_now if np.isfinite(paper) else "", "verdict_changes": exponent_changes,
            "claim_changes": ", ".join(f"{k} {claim_now[k]['verdict']} {v:.0%}" for k, v in claim_changes.items()),
            "decided_per_cpu_hour": (exponent_changes + sum(claim_changes.values())) / hours}


def _width(result: Mapping[str, float]) -> float:
    return result["ci90_high"] - result["ci90_low"]


def _finite_mean(values: Sequence[float]) -> float:
    """The mean of the finite values; NaN, without numpy's empty-slice warning, where a claim has no interval in any
    draw (a claim of equality among three series, when a draw leaves one of them without an interval)."""
    finite = [v for v in values if np.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


def candidate_table(by_rule: Mapping[str, pd.DataFrame], probes: pd.DataFrame,
                    candidates: Sequence[tuple[str, int]], **kw) -> pd.DataFrame:
    """candidate_value of each (series, N): the most verdicts changed per CPU-hour first, then the most narrowing
    per CPU-hour (where no draw changes a verdict, the narrowing is what is left to rank by)."""
    rows = [candidate_value(by_rule, probes, name, N, **kw) for name, N in candidates]
    return pd.DataFrame(rows).sort_values(["decided_per_cpu_hour", "narrowing_per_cpu_hour"],
                                          ascending=False).reset_index(drop=True)
