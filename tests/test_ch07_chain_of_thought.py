"""Chapter 7, chain of thought (covlib.chapters.ch07_chain_of_thought): requirement ratios, greedy decoding against
teacher forcing, sequence IICG, and the notebook's tables and prose."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc
from figure_checks import svg_with_params
from scipy import stats

from covlib.analyses.fits import describe_exponent, summary_exponent
from covlib.analyses.iicg import iicg_bruteforce
from covlib.analyses.residuals import open_shipped, split_items
from covlib.base.errors import CovlibError
from covlib.book.setup import setup_chapter
from covlib.chapters.ch07_chain_of_thought import curves, data_ratios, greedy, inside, searches, summary, tables
from covlib.chapters.ch07_chain_of_thought.data_ratios import cot_ratio, placeholder_share, ratio_lower_bounds
from covlib.chapters.ch07_chain_of_thought.greedy import OUTCOMES, decode_items, decoding_summary, split_label
from covlib.chapters.ch07_chain_of_thought.inside import iicg_peak_table, iicg_sequence_table, sequence_positions
from covlib.chapters.ch07_chain_of_thought.shipped import MODEL_LABELS, shipped_runs, target_layout
from covlib.figures.required_data import search_reader_table
from covlib.figures.tables import metrics_table
from covlib.search.summary import geometric_mean
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


def test_summary_exponent_fits_the_chapters_searches_and_gives_no_interval_below_four_N():
    Ns = np.array([20, 25, 30, 40, 50])
    summary = pd.DataFrame({"N": np.repeat(Ns, 2), "seed": [0, 1] * len(Ns),
                            "n_req": np.repeat(3.0 * Ns ** 2.2, 2) * np.tile([0.95, 1.05], len(Ns))})
    fit = summary_exponent(summary, reps=300)
    assert fit["c"] == pytest.approx(2.2, abs=0.01) and fit["n_values"] == 5 and fit["seeds"] == 2
    assert fit["c_low"] <= fit["c"] <= fit["c_high"]
    three = summary_exponent(summary[summary["N"].isin([20, 25, 30])], reps=300)
    assert three["n_values"] == 3 and np.isnan(three["c_low"]) and np.isnan(three["c_high"])
    assert summary_exponent(summary[summary["N"] == 20]) is None  # one N: no slope
    assert summary_exponent(summary.assign(n_req=np.nan)) is None


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
    # an independent oracle at every cell: the pairwise brute force on residuals read straight from the model's
    # hooks, the items grouped by hand (the first item of each (x1, x2), labelled by the bridge its target writes)
    import torch

    idx = np.flatnonzero(ds.test.types == "type_0")[:300]
    inputs, targets = ds.test.inputs[idx], ds.test.targets[idx]
    with torch.no_grad():
        _, cache = model.run_with_cache(torch.as_tensor(np.concatenate([inputs, targets[:, :-1]], axis=1)).long())
    hooks = ["blocks.0.hook_resid_pre"] + [f"blocks.{i}.hook_resid_post" for i in range(model.cfg.n_layers)]
    resid = np.stack([cache[h].numpy() for h in hooks], axis=1)  # (items, layers + 1, positions, d_model)
    first: dict[tuple[int, int], int] = {}
    for i, (x1, x2) in enumerate(inputs[:, :2].tolist()):
        first.setdefault((x1, x2), i)
    kept = np.array(sorted(first.values()))
    brute = iicg_bruteforce(resid[kept], targets[kept, 0])
    positions = list(dict.fromkeys(table["position"]))
    for row in table.itertuples():
        assert row.iicg == pytest.approx(brute[row.layer, positions.index(row.position)], abs=1e-6)
    # at the bridge position the embedding is the bridge token itself: items of one bridge are identical there,
    # so that cell is flagged high by construction and no peak is read from it
    emb = table[(table["layer"] == 0) & (table["position"] == "b")].iloc[0]
    assert emb["within"] == pytest.approx(1.0, abs=1e-5) and emb["by_construction"]
    assert table["by_construction"].sum() == 1
    peaks = iicg_peak_table(table.assign(model="twohop_cot"), position="b")
    assert peaks.index.tolist() == [("twohop_cot", "b")] and peaks["layer"].iloc[0] >= 1
    at_b = table[(table["position"] == "b") & (table["layer"] >= 1)]
    assert peaks["iicg"].iloc[0] == pytest.approx(at_b["iicg"].max())
    with pytest.raises(CovlibError, match="no IICG rows at position 'b9'"):
        iicg_peak_table(table.assign(model="m"), position="b9")


def test_decoding_chart_has_one_bar_per_row_and_a_tick_at_the_answer():
    from covlib.chapters.ch07_chain_of_thought.data_ratios import ratio_chart
    from covlib.chapters.ch07_chain_of_thought.greedy import decoding_chart

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
    assert len(layers) == 2 and layers[1]["encoding"]["shape"]["field"] == "what"
    assert layers[1]["encoding"]["shape"]["scale"]["range"][1] == "triangle-up"  # the lower bounds, in the legend
    assert data_ratios.bounds_text(bounds).startswith(
        "Where the search without CoT fails at every size it may try, only a bound is known: two-hop N = 20 (seed 0) "
        "fails even at 2,931 examples without CoT and needs about 1,466 with it, a ratio of **at least 2.0**")


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



# ---- the notebook's functions ----

def _fit(c: float, low: float, high: float, n_values: int = 5, points: int = 10) -> dict:
    return {"c": c, "c_low": low, "c_high": high, "n_values": n_values, "points": points, "seeds": 2,
            "N_min": 20, "N_max": 50, "r2": 0.99, "interval": "resampling N-cells and the seeds within them"}


def test_presets_cover_the_three_presets_and_an_unknown_one_is_an_error(tmp_path):
    assert set(searches.PRESETS) == {"smoke", "default", "paper"}
    assert searches.PRESETS["smoke"]["miniature"] and not searches.PRESETS["default"]["miniature"]
    paper, default = searches.PRESETS["paper"], searches.PRESETS["default"]
    assert paper["experiments"] == default["experiments"] and paper["note"] and not default["note"]
    assert default["experiments"]["twohop_cot"]["cot"] and default["fake"]["fake_bridge"]
    with pytest.raises(CovlibError, match="smoke, default, paper"):
        setup_chapter("07", "fast", searches.PRESETS, out_dir=tmp_path)


def test_probe_tables_smoke_writes_under_out_dir_and_an_explicit_table_wins(tmp_path):
    table, fake = searches.probe_tables("", tmp_path, miniature=True)
    assert table == tmp_path / "cot-smoke" / "probes.csv" and fake == tmp_path / "cot-smoke" / "probes_fakebridge.csv"
    table, fake = searches.probe_tables("", tmp_path, miniature=False)
    assert table.parts[-3:] == ("data", "scaling", "probes.csv") and fake.parts[-3:] == ("data", "cot", "probes_fakebridge.csv")
    assert searches.probe_tables(str(tmp_path / "t.csv"), tmp_path, True)[0] == tmp_path / "t.csv"


def test_fits_in_words_and_whether_their_intervals_separate():
    assert describe_exponent(None) == "not enough finished cells to fit"
    assert "no interval" in describe_exponent(_fit(2.0, np.nan, np.nan, n_values=2))
    assert describe_exponent(_fit(2.094, 1.9, 2.3)).startswith("c = 2.09 (95% interval 1.90 to 2.30 by ")
    fits = {"twohop": _fit(2.5, 2.3, 2.7), "twohop_cot": _fit(1.8, 1.6, 2.0)}
    assert "CoT lowers the exponent" in searches.compare_fits(fits, "twohop")
    fits["twohop_cot"] = _fit(2.4, 2.2, 2.6)
    assert " The two-hop intervals overlap" in searches.compare_fits(fits, "twohop")
    fits["twohop_cot"] = _fit(3.0, 2.8, 3.2)
    assert "against the paper" in searches.compare_fits(fits, "twohop")
    fits["twohop_cot"] = None
    assert searches.compare_fits(fits, "twohop") == ""
    assert summary.fit_text(None) == "n/a (not in the cache)"
    assert summary.fit_text(_fit(2.0, np.nan, np.nan, n_values=2)) == "2.00 (from 2 N values: provisional)"
    assert summary.fit_text(_fit(2.0, 1.5, 2.5)) == "2.00 (1.50 to 2.50)"


def test_exponent_table_says_what_each_fit_rests_on():
    done = pd.DataFrame({"N": [20, 20, 25, 30], "n_req": [1.0, np.nan, np.nan, 3.0]})
    summaries = {name: done for name in ("twohop", "twohop_cot", "threehop", "threehop_cot")}
    fits = {"twohop": _fit(2.2, 2.0, 2.4), "twohop_cot": _fit(2.0, np.nan, np.nan, n_values=3), "threehop": None,
            "threehop_cot": None}
    table = searches.exponent_table(fits, summaries)
    assert table["N values"].tolist() == [5, 3, 0, 0] and table["seeds"].tolist() == [2, 2, 0, 0]
    assert table["N range"].tolist() == ["20-50", "20-50", "", ""]
    assert table["c"].iloc[0] == 2.2 and np.isnan(table["c_low"].iloc[1]) and table["c"].iloc[2:].isna().all()
    assert table["target"].tolist() == ["without CoT", "with CoT"] * 2
    assert table["interval"].tolist() == [fits["twohop"]["interval"], fits["twohop_cot"]["interval"], "", ""]
    shown = tables.exponent_reader_table(table).text
    assert shown["c, 95% low"].tolist() == ["2.00", "", "", ""] and shown["paper's c"].tolist()[0] == "2.26"


def test_five_hop_has_a_cot_row_only_beside_the_papers_1_80():
    fits = {"twohop": None, "twohop_cot": None, "threehop": None, "threehop_cot": None,
            "fivehop_cot": _fit(1.9, 1.5, 2.3, n_values=4)}
    table = searches.exponent_table(fits, {})
    five = table[table["task"] == "fivehop"]
    assert len(table) == 5 and five["target"].tolist() == ["with CoT"] and five["paper"].tolist() == [1.80]
    assert five["c"].tolist() == [1.9] and five["N values"].tolist() == [4]
    assert "Five-hop with CoT: c = 1.90 (95% interval 1.50 to 2.30" in searches.exponent_text(fits)
    without = searches.exponent_table({k: v for k, v in fits.items() if k != "fivehop_cot"}, {})
    assert "fivehop" not in without["task"].tolist()  # a preset without the five-hop search has no row for it


def test_non_tree_reachable_is_one_if_any_probe_succeeded_and_nan_before_any_probe():
    searched = pd.DataFrame({"N": [20, 25], "probes": [3, 2], "high": [np.nan, np.nan], "largest_n": [9000, 12000]})
    assert searches.reachable(searched) == 0.0
    assert "No probe reaches 99% (N = 20 up to 9,000, N = 25 up to 12,000 examples)" in (
        searches.reachable_text(searched, 0.99))
    rescued = searched.assign(high=[7500.0, np.nan])
    assert searches.reachable(rescued) == 1.0
    assert "N = 20 at 7,500 examples" in searches.reachable_text(rescued, 0.99)
    unstarted = searched.assign(probes=[0, 0])
    assert np.isnan(searches.reachable(unstarted)) and searches.reachable_text(unstarted, 0.99) == ""


def test_the_two_hop_ratio_counts_the_seeds_it_pairs():
    ratios = pd.DataFrame({"task": ["twohop", "twohop", "twohop", "threehop"], "seed": [0, 1, 1, 2],
                           "ratio": [2.0, 3.0, 4.0, 5.0]})
    assert data_ratios.seeds_paired(ratios) == 2 and data_ratios.seeds_paired(ratios, "threehop") == 1
    assert data_ratios.seeds_paired(ratios.iloc[:0]) == 0


def test_ratio_range_records_the_spread_of_the_pairs():
    ratios = pd.DataFrame({"task": ["twohop", "twohop", "threehop"], "ratio": [1.7, 2.8, 6.1]})
    assert data_ratios.ratio_range(ratios) == {
        "data_ratio_twohop_cot_min": 1.7, "data_ratio_twohop_cot_max": 2.8, "data_ratio_twohop_cot_pairs": 2,
        "data_ratio_threehop_cot_min": 6.1, "data_ratio_threehop_cot_max": 6.1, "data_ratio_threehop_cot_pairs": 1}


def test_ratios_by_task_and_their_text():
    ratios = pd.DataFrame({"N": [20, 25, 10], "seed": [0, 0, 0], "ratio": [2.0, 8.0, 3.0],
                           "task": ["twohop", "twohop", "threehop"]})
    by_task = data_ratios.ratios_by_task(ratios)
    assert by_task["twohop"] == pytest.approx(4.0) and by_task["threehop"] == pytest.approx(3.0)
    text = data_ratios.ratio_text(ratios, by_task)
    assert "two-hop without CoT needs 4.0 times" in text and "geometric mean of 2 pairs, range 2.0 to 8.0" in text
    assert "three-hop without CoT needs 3.0 times the data it needs with CoT (one pair, N = 10)" in text
    assert data_ratios.ratio_text(ratios.iloc[:0], by_task) == ""
    assert np.isnan(data_ratios.ratios_by_task(ratios[ratios["task"] == "twohop"])["threehop"])


def test_five_hop_is_paired_at_its_one_plain_n_as_a_ratio_or_a_bound():
    def summary(statuses, n_req, largest):
        return pd.DataFrame({"N": [6, 7][:len(statuses)], "seed": 0, "status": statuses, "n_req": n_req,
                             "largest_n": largest})
    cot = summary(["bracketed", "bracketed"], [400.0, 700.0], [500, 800])
    twohop = {"twohop": summary(["bracketed"], [800.0], [900]), "twohop_cot": summary(["bracketed"], [400.0], [500]),
              "threehop": summary(["bracketed"], [900.0], [1000]), "threehop_cot": summary(["bracketed"], [300.0], [400])}
    # five-hop searched with CoT only has no pair; a plain search that fails at the pool gives a bound, not a ratio
    assert data_ratios.paired_tasks(twohop | {"fivehop_cot": cot}) == ["twohop", "threehop"]
    failed = twohop | {"fivehop_cot": cot, "fivehop": summary(["unreachable"], [None], [6000])}
    ratios, bounds = data_ratios.ratio_tables(failed)
    assert "fivehop" not in set(ratios["task"]) and data_ratios.ratio_at_least(bounds, "fivehop") == 15.0
    assert np.isnan(data_ratios.ratios_by_task(ratios)["fivehop"])
    assert data_ratios.fivehop_saving(ratios, bounds) == (
        " Without CoT, five-hop at N = 6 fails even at 6,000 examples: CoT needs at least 15.0 times less.")
    solved = twohop | {"fivehop_cot": cot, "fivehop": summary(["bracketed"], [2000.0], [2200])}
    ratios, bounds = data_ratios.ratio_tables(solved)
    assert data_ratios.ratios_by_task(ratios)["fivehop"] == pytest.approx(5.0)
    assert np.isnan(data_ratios.ratio_at_least(bounds, "fivehop"))
    assert "needs 2,000 examples, 5.0 times as many" in data_ratios.fivehop_saving(ratios, bounds)
    assert "five-hop without CoT needs 5.0 times" in data_ratios.ratio_text(ratios, data_ratios.ratios_by_task(ratios))


def test_ratios_under_each_rule_pair_only_cells_both_searches_finished_under_it():
    def summary(n_req, status=("bracketed", "bracketed")):
        return pd.DataFrame({"N": [10, 12], "seed": 0, "status": list(status), "n_req": n_req, "largest_n": 9000})
    authors = {"twohop": summary([4000.0, 6000.0]), "twohop_cot": summary([1000.0, 2000.0])}
    # under the floor the CoT cell at N = 12 is still searching (its lower end reopened): N = 10 pairs alone
    floor = {"twohop": summary([4000.0, 6000.0]),
             "twohop_cot": summary([500.0, None], ("bracketed", "searching"))}
    ratios, bounds = data_ratios.ratio_tables_by_rule({"authors": authors, "floor": floor})
    assert ratios[["rule", "N", "ratio"]].values.tolist() == [["authors", 10, 4.0], ["authors", 12, 3.0],
                                                            ["floor", 10, 8.0]]
    floor_rows = ratios[ratios["rule"] == "floor"]
    pd.testing.assert_frame_equal(data_ratios.under_rule(ratios, "authors"), data_ratios.ratio_tables(authors)[0])
    assert data_ratios.floor_ratio_metrics(floor_rows) == pytest.approx({
        "data_ratio_twohop_cot_floor": 8.0, "data_ratio_twohop_cot_floor_pairs": 1,
        "data_ratio_threehop_cot_floor": np.nan, "data_ratio_threehop_cot_floor_pairs": 0,
        "data_ratio_fivehop_cot_floor": np.nan, "data_ratio_fivehop_cot_floor_pairs": 0}, nan_ok=True)
    text = data_ratios.ratio_text(ratios[ratios["rule"] == "authors"], data_ratios.ratios_by_task(ratios[ratios["rule"] == "authors"]),
                                  floor_rows, "the floor (2,000 steps)")
    assert text.startswith("At equal N, under the authors' rule, two-hop without CoT needs 3.5 times")
    assert ("Under the floor (2,000 steps), on the cells both searches finished under it: two-hop without CoT needs "
            "8.0 times the data it needs with CoT (one pair, N = 10).") in text
    assert "Under the floor" not in data_ratios.ratio_text(ratios, data_ratios.ratios_by_task(ratios))
    shown = tables.ratio_reader_table(ratios).text
    assert shown.columns.tolist()[:2] == ["task", "give-up rule"] and shown["give-up rule"].tolist()[-1] == "floor"


def test_the_ratio_chart_shows_one_rule_at_a_time_and_keeps_the_papers_band():
    ratios = pd.DataFrame({"N": [25, 30], "seed": 0, "n_req_plain": [5e3, 4e3], "n_req_cot": [1e3, 1e3],
                           "ratio": [5.0, 4.0], "task": ["twohop", "fivehop"], "rule": ["authors", "floor"]})
    chart = data_ratios.ratio_chart(ratios, "r", band=(5, 10))
    menu = next(p for p in chart.to_dict()["params"] if p["name"] == "ratio_rule")
    assert menu["value"] == "authors" and menu["bind"]["options"] == ["authors", "floor"]
    first, second = svg_with_params(chart), svg_with_params(chart, ratio_rule="floor")
    assert "N: 25" in first and "N: 30" not in first and "N: 30" in second and "N: 25" not in second
    assert "paper: 5-10x" in first and "paper: 5-10x" in second
    assert ">under authors<" in first and ">under floor<" in second and ">under floor<" not in first  # a saved figure says its rule
    assert "ratio_rule" not in json.dumps(data_ratios.ratio_chart(ratios.drop(columns="rule"), "r").to_dict())


def test_give_up_note_reads_the_steps_of_the_failure_below_each_bracket():
    def probe(task, N, n, success, steps, cap=6000, floor=0):
        return {"task": task, "cot": True, "N": N, "seed": 0, "model": "L4-d128", "n_train": n, "success": success,
                "steps": steps, "step_cap": cap, "give_up_floor": floor}
    probes = pd.DataFrame([probe("fivehop", 6, 400, False, 150), probe("fivehop", 6, 500, True, 100),
                           probe("fivehop", 6, 400, False, 2100, floor=2000),  # a floor's rerun: another rule
                           probe("fivehop", 7, 600, False, 200), probe("fivehop", 7, 600, False, 260, cap=12000),
                           probe("fivehop", 7, 750, True, 100), probe("fivehop", 7, 300, False, 120),
                           probe("twohop", 20, 1300, False, 400), probe("twohop", 20, 1600, True, 300)])

    def summary(task, rows):
        return pd.DataFrame([{"task": task, "cot": True, "seed": 0, "model": "L4-d128", "N": N, "low": low,
                              "n_req": n_req} for N, low, n_req in rows])
    summaries = {"fivehop_cot": summary("fivehop", [(6, 400, 447.0), (7, 600, 671.0), (8, None, None)]),
                 "twohop_cot": summary("twohop", [(20, 1300, 1442.0)])}
    # one value per bracketed cell, from the failure at its lower end (the longest run of a size probed twice)
    assert searches.steps_below_bracket(probes, summaries["fivehop_cot"]).tolist() == [150.0, 260.0]
    note = searches.give_up_note(probes, summaries, 100)
    assert "stopped after 150-260 optimiser steps; two-hop's with CoT after 400:" in note
    assert "Over N = 6-7" in note
    assert searches.give_up_note(probes, {"twohop_cot": summaries["twohop_cot"]}, 100) == ""


def test_decoded_reads_one_cell_and_nan_when_absent():
    decoding = pd.DataFrame({"model": ["m", "m"], "split": ["type_0", "type_2"], "greedy_exact": [0.9, 0.1]})
    assert greedy.decoded(decoding, "m", "greedy_exact") == 0.9
    assert greedy.decoded(decoding, "m", "greedy_exact", "type_2") == 0.1
    assert np.isnan(greedy.decoded(decoding, "other", "greedy_exact"))
    assert np.isnan(greedy.decoded(pd.DataFrame(), "m", "greedy_exact"))


def test_hops_follow_facts_needs_each_hop_right_only_where_its_fact_was_seen():
    def table(bridges3: float) -> pd.DataFrame:
        return pd.DataFrame({"model": ["m", "m"], "split": ["type_2", "type_3"], "greedy_bridges": [0.05, bridges3],
                             "greedy_answer": [0.05, 0.1], "tf_answer": [0.95, 0.1]})
    assert greedy.hops_follow_facts(table(0.97), "m")
    assert not greedy.hops_follow_facts(table(0.5), "m")  # the first hop fails where its fact was seen


def test_outcome_text_says_where_the_errors_start():
    decoding = pd.DataFrame([{"model": "m", "split": "type_0", "greedy_exact": 0.8, "tf_all": 0.8, "tf_answer": 0.9,
                              "bridge right, answer right": 0.8, "bridge right, answer wrong": 0.15,
                              "bridge wrong, answer right": 0.01, "bridge wrong, answer wrong": 0.04}])
    text = greedy.outcome_text(decoding, "m")
    assert "a gap of +10.0 points" in text and "a wrong bridge for 5.0% of the items" in text
    assert text.endswith("in the second hop")


def test_late_rise_is_the_answer_accuracy_gained_over_the_last_window():
    metrics = pd.DataFrame({"step": [0, 250, 500, 750, 1000], "answer_acc/type_0": [0.1, 0.2, 0.4, 0.5, 0.7]})
    assert curves.late_rise(metrics) == pytest.approx(0.7 - 0.4)  # step 1000 against step 500
    assert curves.late_rise(metrics, window=300) == pytest.approx(0.7 - 0.4)  # last step <= 700 is 500
    assert np.isnan(curves.late_rise(metrics, window=2000))
    assert np.isnan(curves.late_rise(None))
    flat = metrics.assign(**{"answer_acc/type_0": 0.5})
    assert curves.still_rising_text({"twohop": flat, "twohop_fakebridge": flat}) == ""
    assert "+30.0 and +30.0 points" in curves.still_rising_text({"twohop": metrics,
                                                                           "twohop_fakebridge": metrics})


def test_final_accuracies_cover_the_four_models_with_nan_for_a_missing_one():
    metrics = {"twohop": pd.DataFrame({"step": [0, 100], "acc/type_0": [0.2, 0.6]})}
    finals = curves.final_accuracies(metrics)
    assert set(finals) == {"twohop", "twohop_cot", "twohop_fakebridge", "nontree_cot"}
    assert finals["twohop"] == 0.6 and np.isnan(finals["nontree_cot"])
    assert "needs all four models" in curves.curves_text(metrics, finals, finals, 100)


def test_bridge_peaks_and_the_context_gap():
    rows = []
    for name, gap in (("twohop_cot", 0.0), ("nontree_cot", 0.3)):
        for key, value in (("b", 0.4), ("b,x2", 0.4 + gap), ("t", 0.2)):
            rows += [{"model": name, "group_by": key, "layer": layer, "position": pos,
                      "iicg": (value if pos == "b" else 0.1) * (layer / 2)}
                     for layer in range(3) for pos in ("x1", "x2", "x3", "b")]
    iicg = pd.DataFrame(rows)
    at_bridge = inside.bridge_position_peaks(iicg)
    assert inside.peak_at_bridge(at_bridge, "twohop_cot", "b") == pytest.approx(0.4)
    assert np.isnan(inside.peak_at_bridge(at_bridge, "twohop_fakebridge", "b"))
    gap = inside.context_gaps(at_bridge)
    assert gap["nontree_cot"] == pytest.approx(0.3) and gap["twohop_cot"] == pytest.approx(0.0)
    assert np.isnan(gap["twohop_fakebridge"])
    where_b = inside.iicg_peaks_by(iicg, "b")
    assert where_b.loc[("nontree_cot", "b"), "position"] == "b" and where_b.loc[("nontree_cot", "b"), "layer"] == 2
    assert inside.iicg_peaks_by(iicg, "b,x3").empty
    text = inside.inside_text(where_b, at_bridge, inside.iicg_peaks_by(iicg, "t"),
                                        {"twohop_cot": 3, "nontree_cot": 3})
    assert "beats grouping by $b$ by **0.30** for non-tree with CoT against 0.00" in text
    assert inside.two_decimals(-0.001) == "0.00" and inside.two_decimals(0.256) == "0.26"


def test_formed_text_names_the_position_that_writes_the_bridge():
    where_b = pd.DataFrame({"iicg": [0.5, 0.4], "layer": [2, 1], "position": ["x3", "x2"]},
                           index=pd.MultiIndex.from_tuples([("twohop_cot", "b"), ("twohop_fakebridge", "b")]))
    assert "the first hop is computed where it is written out" in inside.formed_text(where_b, "twohop_cot", 3)
    assert inside.formed_text(where_b, "twohop_fakebridge", 3) == (
        "twohop_fakebridge at x2, layer 1 (0.40), where chapter 5 found the bridge of the model without CoT")


def test_placeholder_texts_conclude_only_from_three_values_of_N_and_two_seeds():
    two_cells = pd.DataFrame({"N": [25, 30], "seed": [0, 0], "n_req_plain": [8000.0, 10000.0],
                              "n_req_placeholder": [8500.0, 10600.0], "n_req_cot": [2000.0, 1000.0],
                              "share": [-0.04, -0.03]})
    assert data_ratios.mean_share(two_cells) == pytest.approx(-0.035)
    assert np.isnan(data_ratios.mean_share(two_cells.iloc[:0]))
    text = data_ratios.placeholder_data_text(two_cells, "the authors' rule", 1.15, "covlib scaling search ...")
    assert "1.06x to 1.06x" not in text and "1.06x the plain model's data, within the 1.15x" in text
    assert "2 cells on 2 values of N and 1 seed cannot say" in text and "`covlib scaling search ...`" in text
    assert "comes from" not in text and data_ratios.placeholder_verdict(two_cells) == ""
    assert "within the" not in data_ratios.placeholder_data_text(two_cells, "the authors' rule", 1.02)
    six = pd.DataFrame({"N": [25, 25, 30, 30, 40, 40], "seed": [0, 1] * 3, "n_req_plain": [8000.0] * 6,
                        "n_req_placeholder": [7000.0] * 6, "n_req_cot": [2000.0] * 6,
                        "share": [0.1, 0.05, 0.0, 0.12, 0.2, 0.15]})
    text = data_ratios.placeholder_data_text(six, "the floor", 1.15)
    assert "Over these 6 cells (3 values of N, 2 seeds), the saving comes from supervising the bridge" in text
    assert "gets between +10% and +90% of the saving in a cell (mean +50%, 95% interval +4% to +96%)" in \
        data_ratios.placeholder_verdict(six.assign(share=[0.1, 0.9] * 3))
    assert "between -7% and +27%" in data_ratios.placeholder_verdict(six.assign(share=[-0.07, 0.27, 0.05] * 2))
    assert data_ratios.placeholder_verdict(six.assign(share=0.8)) == "the extra position alone gets most of the saving"
    metrics = data_ratios.placeholder_metrics(six, 2000)
    assert (metrics["placeholder_saving_share_n_values"], metrics["placeholder_saving_share_seeds"],
            metrics["placeholder_saving_share_give_up_floor"]) == (3, 2, 2000)
    assert data_ratios.placeholder_data_text(two_cells.iloc[:0], "the authors' rule", 1.15) == ""
    fake = pd.DataFrame({"status": ["not started", "not started"]})
    experiment = searches.EXPERIMENTS["twohop_fakebridge"]
    assert searches.placeholder_search_text(fake, "", experiment, miniature=True).endswith("not in the cache yet.")
    assert "--fake-bridge" in searches.placeholder_search_text(fake, "", experiment, miniature=False)


def test_recorded_metrics_and_summary_without_any_result():
    nan = float("nan")
    fits = {name: None for name in ("twohop", "twohop_cot", "threehop", "threehop_cot")}
    finals = {name: nan for name in ("twohop", "twohop_cot", "twohop_fakebridge", "nontree_cot")}
    empty = pd.DataFrame()
    not_started = pd.DataFrame({"N": [20], "probes": [0], "high": [np.nan]})
    results = summary.recorded_metrics(fits, {"twohop": nan, "threehop": nan, "fivehop": nan}, finals, empty,
                                                empty, 0.0, pd.DataFrame(columns=["share"]), empty, not_started, empty)
    counts = {k for k in results if k.endswith(("_pairs", "_n_values", "_seeds"))}
    assert "cot_twohop_seeds" in counts and np.isnan(results["nontree_cot_reachable"])
    assert len(results) == 38 and results["cot_search_cpu_minutes"] == 0.0 and all(results[k] == 0 for k in counts)
    assert "exponent_twohop_cot_ci_low" not in results  # no fit, no interval
    assert results["placeholder_saving_share_give_up_floor"] == 0  # the authors' rule, where nothing is read
    known = {"cot_search_cpu_minutes", "placeholder_saving_share_give_up_floor"}
    assert all(np.isnan(v) for k, v in results.items() if k not in known and k not in counts)
    assert summary.summary_text(
        fits=fits, ratios=empty, by_task={"twohop": nan}, metrics={}, final_type0=finals, placeholder=empty,
        decoding=empty, available=(), at_bridge=empty, N=30, n_train=6000, bounds=empty) == "The cache holds no results yet."
    table = summary.comparison_table(fits, {"twohop": 4.0}, finals, {"twohop_cot": nan, "nontree_cot": 0.25},
                                              30, 6000)
    assert table["quantity"].iloc[0] == "exponent, two-hop with CoT" and len(table) == 8
    assert table["quantity"].iloc[4] == "exponent, five-hop with CoT" and table.iloc[4, 1] == "1.80"
    assert table.iloc[5, 2] == "4.0x" and table.iloc[0, 2] == "n/a (not in the cache)"
    assert table.iloc[7, 2] == "IICG by (b, x2) minus by b: 0.25 (two-hop CoT n/a (not in the cache))"
    fit = {"c": 2.36, "c_low": 2.12, "c_high": 2.54, "n_values": 5}
    both = summary.comparison_table({**fits, "twohop_cot": fit}, {"twohop": 4.0}, finals,
                                    {"twohop_cot": nan, "nontree_cot": 0.25}, 30, 6000,
                                    floor_fits={"twohop_cot": fit, "fivehop_cot": None})
    assert both.iloc[0, 2] == "authors' rule 2.36 (2.12 to 2.54); floor 2.36 (2.12 to 2.54)"
    assert both.iloc[4, 2] == "authors' rule n/a (not in the cache); floor waiting for its cells"
    assert both.iloc[5, 2] == "4.0x"  # no floor ratio given: the authors' rule's alone
    ratios = summary.comparison_table(fits, {"twohop": 4.0}, finals, {"twohop_cot": nan, "nontree_cot": 0.25}, 30, 6000,
                                      floor_ratio=2.8)
    assert ratios.iloc[5, 2] == "authors' rule 4.0x; floor 2.8x"
    assert summary.comparison_table(fits, {"twohop": 4.0}, finals, {"twohop_cot": nan, "nontree_cot": 0.25}, 30,
                                    6000, floor_ratio=nan).iloc[5, 2] == "authors' rule 4.0x; floor waiting for its cells"


# ---- the exercises ----

def test_exercise_1_bridge_wrong_share_and_its_check():
    decoding = pd.DataFrame({"model": ["twohop_cot", "twohop_cot"], "split": ["type_0", "type_2"],
                             "bridge right, answer right": [0.9, 0.05], "bridge right, answer wrong": [0.05, 0.05],
                             "bridge wrong, answer right": [0.01, 0.03], "bridge wrong, answer wrong": [0.04, 0.87]})
    truth = greedy.bridge_wrong_share(decoding)
    assert truth == pytest.approx(0.9)  # type_2: 0.03 + 0.87
    assert greedy.bridge_wrong_share(decoding, split="type_0") == pytest.approx(0.05)
    assert np.isnan(greedy.bridge_wrong_share(decoding, "nontree_cot"))  # a model not in the table
    check = greedy.check_bridge_wrong
    assert check(0.9, truth).startswith("right") and check(0.902, truth).startswith("right")
    assert check(0.87, truth).startswith("wrong")  # only the wrong bridges followed by a wrong answer
    assert "0.900" not in check(0.87, truth) and "too low" in check(0.87, truth)  # a hint, not the answer
    assert check(0.1, truth).startswith("wrong") and "not a percentage" in check(90, truth)
    assert check(None, truth).startswith("no answer yet") and "'bridge wrong'" in check(None, truth)
    assert "not in the cache" in check(0.9, float("nan"))


@pytest.fixture(scope="module")
def untrained_cot(tmp_path_factory):
    """A tiny CoT two-hop dataset (N = 6) and a freshly initialised one-layer model (seconds, no training): its
    greedy bridges are mostly wrong, and some are no entity at all."""
    from covlib.analyses.residuals import task_tables
    from covlib.tasks.datasets import DatasetConfig, ensure_dataset
    from covlib.tasks.folders import load_dataset
    from covlib.training.batches import sequence_length
    from covlib.training.model import ModelConfig, build_model

    root = tmp_path_factory.mktemp("cot-exercise")
    ds = load_dataset(ensure_dataset(DatasetConfig("twohop", 6, 80, seed=0, test_size_per_type=40, cot=True), root))
    plain = load_dataset(ensure_dataset(DatasetConfig("twohop", 6, 80, seed=0, test_size_per_type=40), root))
    model = build_model(ModelConfig(n_layers=1, d_model=32, n_heads=2), len(ds.vocab), sequence_length(ds), seed=1,
                        device="cpu")
    return model, ds, task_tables(ds), plain


def test_exercise_2_the_answer_after_a_wrong_bridge_and_its_check(untrained_cot):
    model, ds, tables, plain = untrained_cot
    chains = greedy.written_chains(model, ds, tables, split="type_2", max_items=30, batch_size=8)
    assert len(chains) == min(30, len(split_items(ds, "type_2")))
    assert {"x1", "x2", "x3", "b", "b_written", "t", "t_written", "t_of_written", "last_fact_seen"} <= set(chains)
    # the oracle: the dataset's own CoT targets (bridge, answer) for b and t; the raw f2 table for where the
    # written bridge leads; the (b, x3) facts the training items use, collected by a loop, for last_fact_seen
    idx = np.flatnonzero(ds.test.types == "type_2")[:30]
    assert (chains[["x1", "x2", "x3"]].to_numpy() == ds.test.inputs[idx]).all()
    assert (chains["b"] == ds.test.targets[idx, 0]).all() and (chains["t"] == ds.test.targets[idx, 1]).all()
    f2 = tables.tables["f2"]
    assert (chains["b_written"] < ds.num_tokens).any()  # some written bridges are entities: the loop checks them
    used_f2 = {(b, x3) for (_, _, x3), (b, _) in zip(ds.train.inputs.tolist(), ds.train.targets.tolist())}
    for row in chains.itertuples():
        if row.b_written >= ds.num_tokens:  # no entity: nowhere to lead
            assert row.t_of_written == -1 and not row.last_fact_seen
            continue
        assert row.t_of_written == f2[row.b_written, row.x3]
        assert row.last_fact_seen == ((row.b_written, row.x3) in used_f2)
    # the written bridge and answer are greedy decoding's: the same outcomes as decoding_summary on those items
    summary = decoding_summary(model, ds, splits=("type_2",), max_items=30)
    assert (chains["b_written"] != chains["b"]).mean() == pytest.approx(greedy.bridge_wrong_share(
        summary.assign(model="twohop_cot")))
    assert (chains["t_written"] == chains["t"]).mean() == pytest.approx(summary["greedy_answer"].iloc[0])
    # the truth against a hand count, on these items and on a toy table, then the check
    wrong = chains[chains["b_written"] != chains["b"]]
    assert len(wrong) and greedy.follows_written_bridge(chains) == pytest.approx(
        (wrong["t_written"] == wrong["t_of_written"]).mean())
    toy = pd.DataFrame({"b": [1, 2, 3, 4], "b_written": [1, 5, 6, 7], "t": [0, 0, 0, 0], "t_written": [0, 3, 2, 9],
                        "t_of_written": [0, 3, 2, -1]})
    assert greedy.follows_written_bridge(toy) == pytest.approx(2 / 3)  # the right bridge is left out
    assert np.isnan(greedy.follows_written_bridge(toy.iloc[:1]))
    with pytest.raises(CovlibError, match="no bridge columns"):
        greedy.follows_written_bridge(toy.drop(columns="b_written"))
    check = greedy.check_follows_written_bridge
    assert check(2 / 3, 2 / 3).startswith("right") and check(0.6, 2 / 3).startswith("wrong")
    assert check(None, 2 / 3).startswith("no answer yet") and "written_chains" in check(None, 2 / 3)
    assert check(0.5, float("nan")).startswith("cannot check")
    with pytest.raises(CovlibError, match="writes no bridge"):
        greedy.written_chains(model, plain, tables)


# ---- the chapter's live figures and reader tables ----


def _decoding_rows() -> pd.DataFrame:
    rows = pd.DataFrame({"model": ["twohop_cot"] * 2 + ["nontree_cot"] * 2, "split": ["type_0", "type_2"] * 2,
                         "n": [100, 80, 90, 70], "tf_answer": [1.0, 0.9, 0.8, 0.7],
                         "bridge right, answer right": [1.0, 0.1, 0.7, 0.1], "bridge right, answer wrong": [0.0, 0.0, 0.1, 0.1],
                         "bridge wrong, answer right": [0.0, 0.05, 0.1, 0.1], "bridge wrong, answer wrong": [0.0, 0.85, 0.1, 0.7],
                         "greedy_bridges": [1.0, 0.1, 0.8, 0.2], "greedy_answer": [1.0, 0.15, 0.8, 0.2],
                         "greedy_exact": [1.0, 0.1, 0.7, 0.1]})
    return rows.assign(items=rows["model"] + " · " + rows["split"].map(split_label))


def test_the_decoding_buttons_keep_one_kind_of_test_item():
    chart = greedy.decoding_chart(_decoding_rows(), "t", row="items")
    spec = chart.to_dict()
    (shown,) = spec["params"]
    assert shown["bind"]["input"] == "radio"
    assert shown["bind"]["options"] == [greedy.ALL_ITEMS, "ID test", split_label("type_2")]
    assert spec["height"] == {"step": 30}  # the chart shrinks to the rows a reader keeps
    every, only_id = svg_with_params(chart), svg_with_params(chart, test_items_shown="ID test")
    assert "twohop_cot · OOD" in every and "nontree_cot · ID test" in only_id
    assert "OOD" not in only_id  # neither the bars nor the ticks of the OOD rows are drawn
    tips = {t["title"]: t.get("format") for t in spec["layer"][0]["encoding"]["tooltip"]}
    assert tips["share of the items"] == ".1%" and tips["test items"] == ",d"
    vega = vlc.vegalite_to_vega(json.dumps(spec), vl_version="5.8")  # JupyterLab's Vega-Lite
    assert any(s["name"] == "test_items_shown" and "bind" in s for s in vega["signals"])


def test_the_model_dropdown_keeps_one_models_iicg_panels():
    rows = [{"model": m, "split": "type_0", "group_by": key, "layer": layer, "position": p, "iicg": 0.2,
             "by_construction": False, "items": 20, "groups": 5}
            for m in inside.IICG_MODELS for key in inside.IICG_KEYS for layer in (0, 1)
            for p in ("x1", "x2", "x3", "b")]
    chart = inside.iicg_chart(pd.DataFrame(rows))
    (model,) = chart.to_dict()["params"]
    assert model["bind"]["options"] == [inside.ALL_MODELS, *inside.IICG_MODELS]
    assert model["bind"]["labels"][1:] == [MODEL_LABELS[m] for m in inside.IICG_MODELS]
    only = svg_with_params(chart, iicg_model="nontree_cot")
    assert "non-tree with CoT: by b<" in only and "two-hop with CoT:" not in only and "two-hop with the placeholder:" not in only


def test_the_ratio_legend_picks_a_task_and_every_point_says_its_cell():
    ratios = pd.DataFrame({"N": [25], "seed": [0], "n_req_plain": [5e3], "n_req_cot": [1e3], "ratio": [5.0],
                           "task": ["twohop"]})
    spec = data_ratios.ratio_chart(ratios, "r", band=(5, 10)).to_dict()
    assert spec["params"][0]["bind"] == "legend" and spec["params"][0]["select"]["fields"] == ["task"]
    points = spec["layer"][1]["encoding"]
    assert [t["title"] for t in points["tooltip"]] == ["task", "N", "seed", "n_req without CoT", "n_req with CoT",
                                                       "ratio"]
    assert points["opacity"]["condition"]["param"] == spec["params"][0]["name"]


def test_reader_tables_name_models_and_show_rates_and_ratios():
    decoding = tables.decoding_reader_table(_decoding_rows())
    assert decoding.text["model"].tolist()[::2] == ["two-hop with CoT", "non-tree with CoT"]
    assert decoding.text["test items"].tolist()[:2] == ["ID test", split_label("type_2")]
    assert decoding.text["exact match, greedy"].tolist() == ["100.0%", "10.0%", "70.0%", "10.0%"]
    ratios = pd.DataFrame({"task": ["twohop"], "N": [25], "seed": [0], "n_req_plain": [7321.4], "n_req_cot": [1464.28],
                           "ratio": [5.0]})
    row = tables.ratio_reader_table(ratios).text.iloc[0].tolist()
    assert row == ["twohop", "25", "0", "7,321", "1,464", "5.0x"]
    summary = pd.DataFrame({"task": ["twohop"], "cot": [True], "N": [20], "seed": [0], "status": ["searching"],
                            "low": [np.nan], "high": [2931.0], "n_req": [np.nan], "eligible": [3920.0], "probes": [2],
                            "minutes": [12.345]})
    searched = search_reader_table(summary, searches.SEARCH_COLUMNS).text.iloc[0].tolist()
    assert searched == ["twohop", "yes", "20", "0", "searching", "", "2,931", "", "3,920", "2", "12.3"]
    assert search_reader_table(summary, ["N", "status"]).frame.columns.tolist() == [
        "N (tokens)", "status"]
    recorded = metrics_table({"exponent": float("nan"), "pairs": 2, "share": 0.0123456})
    assert recorded.text["value"].tolist() == ["", "2", "0.01235"]


def test_the_placeholder_share_gets_a_t_interval_over_its_cells():
    cells = pd.DataFrame({"N": [25, 25, 30, 30, 40, 40], "seed": [0, 1] * 3,
                          "share": [-0.068, 0.271, -0.061, 0.05, 0.07, -0.087]})
    low, high = data_ratios.share_interval(cells)
    half = stats.t.ppf(0.975, 5) * cells["share"].std(ddof=1) / np.sqrt(6)
    assert (low, high) == pytest.approx((cells["share"].mean() - half, cells["share"].mean() + half))
    metrics = data_ratios.placeholder_metrics(cells, 2000)
    assert metrics["placeholder_saving_share_ci_low"] == pytest.approx(low) and low < 0 < high
    assert np.isnan(data_ratios.share_interval(cells.iloc[:1])).all()


def test_the_pending_note_resumes_each_search_under_its_own_rule():
    experiment = {"task": "threehop", "N": [10, 12, 24, 30], "seeds": [0], "model": "L4-d128", "cot": True,
                  "floor_only_N": [24, 30]}
    authors = pd.DataFrame({"N": [10, 12], "status": ["bracketed", "searching"]})
    floor_only = pd.DataFrame({"N": [24, 30], "status": ["bracketed", "searching"]})
    note = searches.pending_note({"threehop_cot": authors}, {"threehop_cot": experiment},
                                 {"threehop_cot": floor_only}, 2000)
    assert note.startswith("**Not finished yet**")
    # the authors' command searches its unfinished cells' N only (a higher step cap would retrain the others)
    assert "three-hop, CoT: 1 of 2 cells (`covlib scaling search --task threehop --N 12 --seeds 0" in note
    assert ("three-hop, CoT under the floor alone, at N = 30: 1 of 2 cells (`covlib scaling search --task threehop "
            "--N 24 30 --seeds 0 --model L4-d128 --cot --give-up-floor 2000") in note
    finished = authors.assign(status="bracketed")
    assert searches.pending_note({"threehop_cot": finished}, {"threehop_cot": experiment},
                                 {"threehop_cot": floor_only.assign(status="bracketed")}, 2000) == ""
    assert searches.pending_note({"threehop_cot": finished}, {"threehop_cot": experiment}) == ""


def test_the_summary_sets_cot_beside_plain_under_the_floor_where_both_are_fitted():
    fit = {"c": 2.0, "c_low": 1.8, "c_high": 2.2, "n_values": 5}
    empty = pd.DataFrame()
    finals = {name: np.nan for name in ("twohop", "twohop_cot", "twohop_fakebridge", "nontree_cot")}
    common = dict(ratios=empty, by_task={"twohop": np.nan}, metrics={}, final_type0=finals, placeholder=empty,
                  decoding=empty, available=(), at_bridge=empty, N=30, n_train=6000, bounds=empty)
    fits = {"twohop": fit, "twohop_cot": fit, "threehop": fit, "threehop_cot": fit}
    floor = {"twohop": {**fit, "c": 2.29}, "twohop_cot": {**fit, "c": 2.36}, "threehop": {**fit, "c": 2.73},
             "threehop_cot": None}  # three-hop CoT still waits for its cells under the floor
    text = summary.summary_text(fits=fits, floor_fits=floor, **common)
    assert ("Under the step floor (section 7.1): two-hop N^2.36 against N^2.29 without." in text)
    assert "three-hop N^" not in text.split("Under the step floor")[1]
    assert "Under the step floor" not in summary.summary_text(fits=fits, **common)
    paired = common | {"ratios": pd.DataFrame({"ratio": [2.4]}), "by_task": {"twohop": 2.4}}
    assert ("needs 2.4 times the data it needs with CoT under the authors' rule, 2.8 times under the floor."
            in summary.summary_text(fits=fits, floor_ratio=2.8, **paired))
    assert "needs 2.4 times the data it needs with CoT." in summary.summary_text(fits=fits, **paired)
    full = fit | {"seeds": 2, "N_min": 6, "N_max": 10, "interval": "resampling", "r2": 0.9}
    five = summary.summary_text(fits=fits | {"fivehop_cot": full}, floor_fits=floor | {"fivehop_cot": {**full, "c": 1.23}},
                                **common)
    assert "Five-hop with CoT, under the authors' rule: c = 2.00" in five and "; under the step floor c = 1.23" in five
    assert "under the step floor c" not in summary.summary_text(fits=fits | {"fivehop_cot": full}, floor_fits=floor,
                                                                **common)
    led = summary.summary_text(fits=fits, verdicts="Against the paper: inconclusive.",
                               claims="The paper's comparative claims: holds.", **common).split("\n")
    assert led[:2] == ["* Against the paper: inconclusive.", "* The paper's comparative claims: holds."]
    assert led[2].startswith("* With the bridge written out")  # what it concludes first, then what it measured
    rules = pd.DataFrame([{"exponent": "twohop_cot", "give_up_floor": 0, "fit": fit},
                          {"exponent": "twohop_cot", "give_up_floor": 2000, "fit": floor["twohop_cot"]}])
    assert searches.floor_fits(rules) == {"twohop_cot": floor["twohop_cot"]}
