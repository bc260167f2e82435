"""Chain of thought (covlib.chapters.ch07_chain_of_thought): requirement ratios, greedy decoding against teacher forcing, sequence IICG."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib.analyses.fits import fit_exponent
from covlib.analyses.residuals import open_shipped
from covlib.base.errors import CovlibError
from covlib.chapters.ch07_chain_of_thought import (
    OUTCOMES,
    cot_ratio,
    decode_items,
    decoding_summary,
    geometric_mean,
    iicg_peak_table,
    iicg_sequence_table,
    placeholder_share,
    ratio_lower_bounds,
    sequence_positions,
    shipped_runs,
    split_label,
    target_layout,
)
from covlib.training.shipped import ship_run


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The chapter's smoke-sized CoT two-hop and plain two-hop models, trained and archived (seconds)."""
    root = tmp_path_factory.mktemp("cot")
    runs = shipped_runs("smoke")
    out = {}
    for name in ("twohop", "twohop_cot"):
        ship_run(runs[name], root / "shipped", root / "work", progress=False)
        out[name] = open_shipped(runs[name], root / "shipped", root / "work" / "datasets")
    return out


def test_requirement_ratio_pairs_finished_cells_at_the_same_N_and_seed():
    plain = pd.DataFrame({"N": [20, 25, 25, 30], "seed": [0, 0, 1, 0], "n_req": [None, 5000.0, 6000.0, 8000.0]})
    with_cot = pd.DataFrame({"N": [20, 25, 30, 40], "seed": [0, 0, 0, 0], "n_req": [400.0, 1000.0, None, 3000.0]})
    ratios = cot_ratio(plain, with_cot)
    assert ratios[["N", "seed"]].values.tolist() == [[25, 0]]  # N=20 plain and N=30 CoT unfinished; N=40 unpaired
    assert ratios["ratio"].iloc[0] == pytest.approx(5.0)
    assert geometric_mean([2.0, 8.0]) == pytest.approx(4.0)
    assert np.isnan(geometric_mean([]))


def test_ratio_lower_bounds_only_where_the_plain_search_fails_everywhere():
    plain = pd.DataFrame({"N": [20, 25, 30], "seed": [0, 0, 0], "status": ["unreachable", "bracketed", "unreachable"],
                          "n_req": [None, 5000.0, None], "largest_n": [2931, 5584, 6000]})
    with_cot = pd.DataFrame({"N": [20, 25, 30], "seed": [0, 0, 0], "status": ["bracketed", "bracketed", "searching"],
                             "n_req": [1465.5, 1000.0, None], "largest_n": [1680, 1200, 900]})
    bounds = ratio_lower_bounds(plain, with_cot)
    # N=25 has a ratio proper (not a bound); N=30's CoT search has no estimate yet
    assert bounds[["N", "seed"]].values.tolist() == [[20, 0]]
    assert bounds["ratio_at_least"].iloc[0] == pytest.approx(2.0)
    assert ratio_lower_bounds(plain.iloc[:0], with_cot).empty
    assert list(cot_ratio(plain, with_cot)["N"]) == [25]


def test_placeholder_share_places_the_placeholder_between_plain_and_cot_in_log_data():
    plain = pd.DataFrame({"N": [25, 30, 40], "seed": [0, 0, 0], "n_req": [8000.0, 10000.0, 20000.0]})
    with_cot = pd.DataFrame({"N": [25, 30, 40], "seed": [0, 0, 0], "n_req": [2000.0, 1000.0, 5000.0]})
    fake = pd.DataFrame({"N": [25, 30, 40], "seed": [0, 0, 0], "n_req": [4000.0, 10000.0, None]})
    shares = placeholder_share(plain, with_cot, fake)
    assert shares["N"].tolist() == [25, 30]  # N=40's placeholder search is unfinished
    assert shares["share"].tolist() == pytest.approx([0.5, 0.0])  # halfway in log data; no saving at all
    assert placeholder_share(plain, with_cot, fake.iloc[:0]).empty


def test_fit_exponent_recovers_a_power_law_and_gives_no_interval_from_two_N_values():
    Ns = np.array([20, 25, 30, 40, 50])
    summary = pd.DataFrame({"N": np.repeat(Ns, 2), "seed": [0, 1] * len(Ns),
                            "n_req": np.repeat(3.0 * Ns ** 2.2, 2) * np.tile([0.95, 1.05], len(Ns))})
    fit = fit_exponent(summary, reps=300)
    assert fit["c"] == pytest.approx(2.2, abs=0.01) and fit["n_values"] == 5
    assert fit["c_low"] <= fit["c"] <= fit["c_high"]
    two = fit_exponent(summary[summary["N"].isin([20, 25])], reps=300)
    assert two["n_values"] == 2 and np.isnan(two["c_low"]) and np.isnan(two["c_high"])
    assert fit_exponent(summary[summary["N"] == 20]) is None  # one N: no slope
    assert fit_exponent(summary.assign(n_req=np.nan)) is None


def test_split_labels_follow_the_type_numbering():
    assert split_label("type_0") == "ID test"
    assert split_label("type_1") == "OOD: f1 unseen, f2 unseen"
    assert split_label("type_2") == "OOD: f1 unseen, f2 seen"
    assert split_label("type_3") == "OOD: f1 seen, f2 unseen"
    assert split_label("type_4", n_primitives=3) == "OOD: f1 unseen, f2 seen, f3 seen"
    with pytest.raises(CovlibError, match="type_0 .. type_3"):
        split_label("type_4")


def test_layouts_of_two_and_three_hop_cot_and_placeholder_datasets(tmp_path):
    from covlib.tasks.datasets import DatasetConfig, ensure_dataset
    from covlib.tasks.folders import load_dataset

    three = load_dataset(ensure_dataset(DatasetConfig("threehop", 5, 60, seed=0, test_size_per_type=10, cot=True),
                                        tmp_path))
    assert target_layout(three) == ["b1", "b2", "t"]
    assert sequence_positions(three) == ["x1", "x2", "x3", "x4", "b1", "b2"]
    fake = load_dataset(ensure_dataset(DatasetConfig("twohop", 6, 60, seed=0, test_size_per_type=10, fake_bridge=True),
                                       tmp_path))
    assert target_layout(fake) == ["b", "t"]
    assert (fake.test.targets[:, 0] == fake.vocab.index("</b>")).all()  # the placeholder, never the bridge


def test_greedy_exact_match_is_teacher_forced_all_tokens_and_never_above_the_answer(shipped):
    model, ds, _, _ = shipped["twohop_cot"]
    assert target_layout(ds) == ["b", "t"] and sequence_positions(ds) == ["x1", "x2", "x3", "b"]
    items = decode_items(model, ds.test.inputs[:300], ds.test.targets[:300], batch_size=64)
    assert len(items) == 300
    assert (items["greedy_exact"] == items["tf_all"]).all()  # while the model is right its inputs are the teacher's
    assert not (items["greedy_exact"] & ~items["tf_answer"]).any()  # exact match implies the teacher-forced answer
    assert (items["greedy_exact"] == (items["greedy_bridges"] & items["greedy_answer"])).all()
    summary = decoding_summary(model, ds, splits=("type_0",), max_items=200)
    outcomes = summary[list(OUTCOMES.values())].sum(axis=1)
    assert outcomes.iloc[0] == pytest.approx(1.0)
    assert summary["tf_answer"].iloc[0] >= summary["greedy_exact"].iloc[0]


def test_decoding_refuses_a_dataset_without_a_bridge_and_mismatched_targets(shipped):
    model, ds, _, _ = shipped["twohop"]
    with pytest.raises(CovlibError, match="no bridge written out"):
        decoding_summary(model, ds)
    cot_model, cot_ds, _, _ = shipped["twohop_cot"]
    with pytest.raises(CovlibError, match="one target row per prompt"):
        decode_items(cot_model, cot_ds.test.inputs[:5], cot_ds.test.targets[:4])


def test_sequence_iicg_covers_the_bridge_position(shipped):
    model, ds, tables, _ = shipped["twohop_cot"]
    table = iicg_sequence_table(model, ds, tables, ["b"], max_items=300)
    assert set(table["position"]) == {"x1", "x2", "x3", "b"}
    assert table["layer"].nunique() == model.cfg.n_layers + 1
    assert table["iicg"].between(-2, 2).all()
    # at the bridge position the embedding is the bridge token itself: items of one bridge are identical there
    emb = table[(table["layer"] == 0) & (table["position"] == "b")].iloc[0]
    assert emb["within"] == pytest.approx(1.0, abs=1e-5)
    peaks = iicg_peak_table(table.assign(model="twohop_cot"), position="b")
    assert peaks.index.tolist() == [("twohop_cot", "b")] and peaks["layer"].iloc[0] >= 1  # embeddings left out
    at_b = table[(table["position"] == "b") & (table["layer"] >= 1)]
    assert peaks["iicg"].iloc[0] == pytest.approx(at_b["iicg"].max())
    with pytest.raises(CovlibError, match="no IICG rows at position 'b9'"):
        iicg_peak_table(table.assign(model="m"), position="b9")


def test_decoding_chart_has_one_bar_per_row_and_a_tick_at_the_answer():
    from covlib.chapters.ch07_chain_of_thought import decoding_chart, ratio_chart

    rows = pd.DataFrame({"model": ["m", "m"], "split": ["type_0", "type_2"], "tf_answer": [1.0, 0.9],
                         "bridge right, answer right": [1.0, 0.1], "bridge right, answer wrong": [0.0, 0.0],
                         "bridge wrong, answer right": [0.0, 0.05], "bridge wrong, answer wrong": [0.0, 0.85]})
    rows["items"] = rows["model"] + " · " + rows["split"].map(split_label)
    spec = decoding_chart(rows, "t", row="items").to_dict()
    bars, ticks = spec["layer"]
    assert bars["encoding"]["y"]["field"] == "items" and ticks["encoding"]["x"]["field"] == "tf_answer"
    assert spec["layer"][0]["mark"]["type"] == "bar"
    ratios = pd.DataFrame({"N": [25], "seed": [0], "n_req_plain": [5e3], "n_req_cot": [1e3], "ratio": [5.0],
                           "task": ["twohop"]})
    assert len(ratio_chart(ratios, "r", band=(5, 10)).to_dict()["layer"]) == 2  # the paper's band and the points
    bounds = pd.DataFrame({"N": [20], "seed": [0], "plain_fails_at": [2931.0], "n_req_cot": [1465.5],
                           "ratio_at_least": [2.0], "task": ["twohop"]})
    layers = ratio_chart(ratios.iloc[:0], "r", bounds=bounds).to_dict()["layer"]
    assert len(layers) == 2 and layers[1]["mark"]["shape"] == "triangle-up"


def test_shipped_runs_and_the_ship_cli_guard(tmp_path, capsys):
    from covlib.cli.main import main

    runs = shipped_runs("default")
    assert set(runs) == {"twohop", "twohop_cot", "twohop_fakebridge", "nontree_cot"}
    assert runs["twohop_cot"].dataset["cot"] and runs["twohop_fakebridge"].dataset["fake_bridge"]
    assert len({r.folder for r in runs.values()}) == 4  # four distinct archives
    assert main(["ship", "cot", "--preset", "smoke"]) == 2
    assert "needs --dest" in capsys.readouterr().err
    assert main(["ship", "cot", "--only", "fivehop", "--preset", "smoke", "--dest", str(tmp_path)]) == 2
    assert "no such model" in capsys.readouterr().err and not any(tmp_path.iterdir())  # nothing half-written
