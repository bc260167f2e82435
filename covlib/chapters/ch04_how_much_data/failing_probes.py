"""A bracket's two probes side by side: their learning curves, the coverage of their ID test items, and
how the failing one failed."""
from __future__ import annotations

import math
from pathlib import Path

import altair as alt
import pandas as pd

from covlib.coverage.requirement import probe_coverage_by_k
from covlib.figures.charts import accuracy_curves_chart, coverage_by_k_chart
from covlib.search.probes import read_curve


def cell_key(pair: pd.Series) -> dict:
    """The (task, N, model, seed) of a search summary row, as read_curve and the probe table key it."""
    return {"task": pair["task"], "N": int(pair["N"]), "model": pair["model"], "seed": int(pair["seed"])}


def pair_curves(table_path: Path, pair: pd.Series) -> pd.DataFrame:
    """Training and ID test accuracy by step of a bracket's failing and succeeding probes, one column per
    (metric, run) labelled for the chart."""
    key = cell_key(pair)
    curves = []
    for label, n in (("fails", int(pair["low"])), ("succeeds", int(pair["high"]))):
        c = read_curve(table_path, **key, n_train=n)
        curves.append(c.assign(run=f"n = {n:,} ({label})"))
    curve_frame = pd.concat(curves, ignore_index=True)
    wide = curve_frame.pivot_table(index="step", columns="run", values=["acc/train_inferred", "acc/type_0"])
    wide.columns = [f"{'train' if m == 'acc/train_inferred' else 'ID test'}, {r}" for m, r in wide.columns]
    return wide.reset_index()


def pair_coverage(pair: pd.Series) -> pd.DataFrame:
    """Coverage by k of the ID test items of a bracket's two probes (their datasets regenerated)."""
    key = cell_key(pair)
    return pd.concat([probe_coverage_by_k(key["task"], key["N"], int(pair[end]), key["seed"]).assign(
        type=f"n = {int(pair[end]):,}") for end in ("low", "high")], ignore_index=True)


def failure_chart(wide: pd.DataFrame, covs: pd.DataFrame, pair: pd.Series) -> alt.VConcatChart:
    """Learning curves of the two probes above the coverage of their ID test items."""
    key = cell_key(pair)
    palette = ["#90caf9", "#1565c0", "#ef9a9a", "#c62828"]
    series = {c: c for c in wide.columns if c != "step"}
    failure_curve = accuracy_curves_chart(wide, series, f"Two-hop N={key['N']}, seed {key['seed']}: "
                                                        "just below and just above the required data",
                                          colors=dict(zip(series, palette)), chance=1 / key["N"])
    # both sets cover nearly every ID item: on a 0-100 axis their lines would be one line along the top
    lowest = float(covs["covered"].min()) * 100
    cov_chart = coverage_by_k_chart(covs, title="ID test items k-covered", legend_title="training set",
                                    y_from=math.floor(lowest) - 1 if lowest >= 90 else 0)
    # the chance line's legend stays with the curves it belongs to (a shared one sat under the coverage panel)
    return alt.vconcat(failure_curve, cov_chart).resolve_scale(color="independent").resolve_legend(
        strokeDash="independent")  # stacked: side by side would be wider than a page


def probe_row(probes: pd.DataFrame, pair: pd.Series, n_train: int) -> pd.Series:
    """The probe table's row of a cell's probe at one training-set size."""
    key = cell_key(pair)
    return probes[(probes["task"] == key["task"]) & (probes["N"] == key["N"]) & (probes["model"] == key["model"])
                  & (probes["seed"] == key["seed"]) & (probes["n_train"] == n_train)].iloc[0]


def failure_note(probes: pd.DataFrame, pair: pd.Series, covs: pd.DataFrame, threshold: float) -> str:
    """How the failing probe failed and the succeeding one succeeded, and whether coverage separates them."""
    fail_row, pair_rows = probe_row(probes, pair, int(pair["low"])), probe_row(probes, pair, int(pair["high"]))
    cov3 = covs[covs["k"] == 3].set_index("type")["covered"]
    note = (
        f"With {int(pair['low']):,} examples the model fitted its training set "
        f"(step {int(fail_row['first_fit_step']) if pd.notna(fail_row['first_fit_step']) else 'never'}; final training "
        f"accuracy {fail_row['final_train']:.1%}); its ID accuracy reached {fail_row['best_type0']:.1%} by step "
        f"{int(fail_row['steps'])}, where the give-up rule ended it ({fail_row['stopped']}). With {int(pair['high']):,} examples "
        f"({pair['high'] / pair['low']:.2f} times as many) it reached {threshold:.0%} at step {int(pair_rows['steps'])}. ")
    if abs(cov3.iloc[0] - cov3.iloc[1]) < 0.005:
        return note + (f"Coverage does not separate the two: {cov3.iloc[0]:.1%} and {cov3.iloc[1]:.1%} of the ID test "
                       "items are 3-covered. Here every ID item is reachable and the difference is how fast the model "
                       "gets there, which the give-up rule turns into a requirement: the measured n_req depends on "
                       "the rule as well as on coverage (try `give_up_epochs` in the search).")
    return note + (f"Coverage moves with the data: {cov3.iloc[0]:.1%} of the ID test items are 3-covered at the "
                   f"smaller size, {cov3.iloc[1]:.1%} at the larger.")


def fitted_failures_note(probes: pd.DataFrame) -> str:
    """How many failing probes fitted their training set and still missed the threshold ("" if none failed)."""
    fails = probes[~probes["success"]] if len(probes) else probes
    if not len(fails):
        return ""
    fitted_fails = fails[fails["final_train"] >= 0.99]
    return (f" Across the whole table, {len(fitted_fails)} of {len(fails)} failing probes fitted their "
            "training set (at least 99%) and still stayed below the threshold on the ID test.")
