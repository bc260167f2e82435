"""How much data (covlib.chapters.ch04_how_much_data): presets, the cache's state, fits of required data, and the
chapter's readings of its tables."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc
from figure_checks import missing_tooltips, unexplained_layers

from covlib.analyses.fits import describe_exponent, summary_exponent
from covlib.base.errors import CovlibError
from covlib.base.paths import repository_path
from covlib.book.setup import setup_chapter
from covlib.chapters.ch04_how_much_data import (
    exercises,
    explore,
    failing_probes,
    findings,
    longer_chains,
    model_comparison,
    searches,
    twohop_law,
    views,
)
from covlib.chapters.ch04_how_much_data.searches import PRESETS
from covlib.figures.tables import metrics_table
from covlib.search.cells import ProbeRules
from covlib.search.experiments import BOOK_EXPERIMENTS, BOOK_TABLE
from covlib.search.summary import geometric_mean
from covlib.training.config import model_params


def summary(rows: list[tuple]) -> pd.DataFrame:
    """A search summary from (N, seed, n_req or None, status) rows, as covlib.search.summary.summarise gives."""
    frame = pd.DataFrame(rows, columns=["N", "seed", "n_req", "status"])
    return frame.assign(task="twohop", model="L4-d128", low=frame["n_req"] * 0.9, high=frame["n_req"] * 1.1,
                        eligible=(0.49 * frame["N"] ** 3).round(), low_capped=False, probes=4, minutes=30.0)


def test_presets_cover_every_preset_and_an_unknown_one_is_an_error(tmp_path):
    assert set(PRESETS) == {"smoke", "default", "paper"}
    assert PRESETS["default"]["experiments"] is BOOK_EXPERIMENTS
    assert PRESETS["smoke"]["always_recompute"] and not PRESETS["default"]["always_recompute"]
    assert PRESETS["paper"]["note"] and not PRESETS["default"]["note"]
    chapter = setup_chapter("04", "smoke", PRESETS, out_dir=tmp_path)
    assert chapter.root == tmp_path and chapter["rules"]["step_cap"] == 300
    with pytest.raises(CovlibError, match="smoke, default, paper"):
        setup_chapter("04", "fast", PRESETS)


def test_probe_table_path_prefers_the_readers_table_then_a_fresh_one_then_the_books(tmp_path):
    assert searches.probe_table_path("/x/p.csv", tmp_path, "scaling/probes_smoke.csv") == Path("/x/p.csv")
    assert searches.probe_table_path("", tmp_path, "scaling/probes_smoke.csv") == tmp_path / "scaling/probes_smoke.csv"
    assert searches.probe_table_path("", tmp_path, "") == repository_path(BOOK_TABLE)


def test_cache_status_counts_cells_by_status():
    s = summary([(20, 0, 100.0, "bracketed"), (25, 0, 200.0, "bracketed"), (30, 0, None, "searching")])
    assert searches.coverage_of_cache(s) == "2 bracketed, 1 searching of 3 cells"
    assert searches.coverage_of_cache(pd.DataFrame()) == "no probes yet"
    status = searches.cache_status({"twohop": s, "threehop": pd.DataFrame()})
    assert status["cells"].tolist() == ["2 bracketed, 1 searching of 3 cells", "no probes yet"]


def test_search_cost_sums_probes_and_hours():
    s = summary([(20, 0, 100.0, "bracketed"), (25, 0, 200.0, "bracketed")])
    assert searches.search_cost({"a": s, "b": s, "c": pd.DataFrame()}) == (16, 2.0)
    assert searches.search_cost({"a": pd.DataFrame()}) == (0, 0.0)


def test_the_chapter_fits_finished_cells_with_the_designs_interval_and_says_its_support():
    s = summary([(N, seed, 3.0 * N**2.5 * (1.02 if seed else 0.98), "bracketed") for N in (10, 20, 40, 80)
                 for seed in (0, 1)] + [(50, 0, None, "searching")])
    fit = summary_exponent(s, reps=200)
    assert fit["c"] == pytest.approx(2.5) and fit["points"] == 8 and fit["interval"] == "resampling N-cells and the seeds within them"
    assert (fit["n_values"], fit["seeds"], fit["N_min"], fit["N_max"]) == (4, 2, 10, 80)
    text = describe_exponent(fit)
    assert text.startswith("c = 2.50 (95% interval") and "N = 10-80, 4 values of N, 2 seeds" in text
    three = summary_exponent(s[s["N"] < 80], reps=200)
    assert np.isnan(three["c_low"]) and twohop_law.interval_text(three) == "none (3 N)"
    assert describe_exponent(three).startswith("c = 2.50 (no interval: 3 values of N are too few")
    assert summary_exponent(s[s["N"] == 10], reps=200) is None
    assert describe_exponent(None) == "not enough finished cells to fit"


def test_coverage_fits_recover_each_k_and_give_the_theory():
    rows = [{"N": N, "k": k, "target": 0.99, "n_train": 2.0 * N ** (1.5 + k / 4)} for N in (8, 16, 32) for k in (2, 3)]
    fits = twohop_law.coverage_fits(pd.DataFrame(rows)).set_index("k")
    assert fits.loc[2, "c"] == pytest.approx(2.0) and fits.loc[3, "c"] == pytest.approx(2.25)
    assert fits.loc[3, "theory 2.5 - 0.5/k"] == pytest.approx(2.5 - 0.5 / 3) and fits.loc[2, "N range"] == "8-32"
    assert twohop_law.coverage_fits(pd.DataFrame(rows), N_max=16).loc[0, "N range"] == "8-16"
    assert twohop_law.coverage_exponent(fits.reset_index(), k=3) == pytest.approx(2.25)
    assert np.isnan(twohop_law.coverage_exponent(fits.reset_index(), k=4))


def test_pool_note_names_the_N_where_the_requirement_nears_the_pool():
    s = summary([(10, 0, 300.0, "bracketed"), (20, 0, 400.0, "bracketed")])  # pool 490 and 3,920
    shares = twohop_law.pool_shares(s)
    assert shares["share_of_pool"].tolist() == pytest.approx([300 / 490, 400 / 3920])
    note = twohop_law.pool_note(s, pd.DataFrame(), ProbeRules(), None)
    assert note.startswith("At N = 10 the required data is 61% of the whole ID pool")
    assert twohop_law.pool_note(s.iloc[:0], pd.DataFrame(), ProbeRules(), None) == "No finished two-hop cells yet."


def test_capped_cells_are_named_and_the_fit_without_them_is_given():
    s = summary([(N, 0, 3.0 * N**2, "bracketed") for N in (10, 20, 40)])
    s.loc[s["N"] == 40, "n_req"] = 3.0 * 40**3  # the capped cell sits above the law
    s.loc[s["N"] == 40, "low_capped"] = True
    full = summary_exponent(s, reps=100)
    decided = twohop_law.fit_rule_decided(s, full, reps=100)
    assert decided["c"] == pytest.approx(2.0) and full["c"] > 2.0
    note = twohop_law.capped_note(s, ProbeRules(step_cap=6000), decided)
    assert note.startswith(" At N = 40 (seed 0, the 6,000-step cap) the bracket's failing probe stopped at its "
                           "step cap")
    assert note.endswith(f"gives {describe_exponent(decided)}.")
    # with the probe rows, each cell names its own cap and whether its failing probe fitted its training set
    low = int(s.loc[s["N"] == 40, "low"].iloc[0])
    rows = pd.DataFrame([{"N": 40, "seed": 0, "n_train": low, "stopped": "steps", "step_cap": cap, "first_fit_step": fit,
                          "final_train": 0.971, "best_type0": 0.089} for cap, fit in ((6000, np.nan), (30000, np.nan))])
    note = twohop_law.capped_note(s, ProbeRules(step_cap=6000), decided, rows)
    assert note.startswith(f" At N = 40 (seed 0, {low:,} examples: 30,000 steps without fitting its training set "
                           "(97.1% of it at the end), best ID accuracy 8.9%) the bracket's failing probe")
    fitted = twohop_law.capped_note(s, ProbeRules(), decided, rows.assign(first_fit_step=21000.0))
    assert "30,000 steps, its training set fitted at step 21,000, best ID accuracy 8.9%)" in fitted
    uncapped = s.assign(low_capped=False)
    assert twohop_law.fit_rule_decided(uncapped, full) is full and twohop_law.capped_note(uncapped, ProbeRules(), full) == ""


def test_raised_cap_note_lists_where_the_cap_was_raised():
    rows = pd.DataFrame({"N": [20, 20, 30, 40], "step_cap": [6000, 6000, 6000, 12000]})
    assert twohop_law.raised_cap_note(rows, ProbeRules()).startswith(
        " The step cap was 6,000 steps except at N = 40 (12,000): there the training set is fitted late and 100 epochs")
    assert twohop_law.raised_cap_note(rows[rows["N"] < 40], ProbeRules()) == ""


def test_size_ratios_and_note_judge_a_size_against_the_seed_spread():
    default = summary([(25, 0, 1000.0, "bracketed"), (30, 0, 2000.0, "bracketed")])
    small = summary([(25, 0, 250.0, "bracketed"), (30, 0, 2000.0, "bracketed")]).assign(model="L2-d64")
    experiments = {"twohop": {"model": "L4-d128"}, "twohop_small_model": {"model": "L2-d64"}}
    summaries = {"twohop_small_model": small, "twohop": default}
    ratios = model_comparison.size_ratios(summaries, experiments, model_comparison.size_experiments(summaries))
    assert list(ratios) == ["L2-d64"] and ratios["L2-d64"]["ratio"].tolist() == [0.25, 1.0]
    assert geometric_mean(ratios["L2-d64"]["ratio"]) == pytest.approx(0.5)
    sizes = pd.DataFrame([{"model": "L2-d64", "parameters": 1e5, "cells finished": 2, "cells": 2, "exponent": np.nan,
                           "interval": "n/a", "has interval": False, "mean n_req": 1125.0, "unreachable at N": "", "capped at N": ""}])
    note = model_comparison.size_note(sizes, sizes, np.nan, ratios, spread=1.5, reference="L4-d128")
    assert note.startswith("L2-d64 (0.10M parameters): 2 of 2 cells finished.")
    assert "L2-d64 needs 0.50 times the data of L4-d128 on the 2 cells both finished (per cell: N = 25 0.25, N = 30 1.00)" in note
    assert "**less**, against a typical 1.50-fold gap" in note
    assert "**about the same**" in model_comparison.size_note(sizes, sizes, np.nan, ratios, spread=3.0, reference="x")
    assert "no second seed" in model_comparison.size_note(sizes, sizes, np.nan, ratios, spread=np.nan, reference="x")
    one_cell = {"L2-d64": ratios["L2-d64"].iloc[:1]}
    note = model_comparison.size_note(sizes, sizes, np.nan, one_cell, spread=1.5, reference="x")
    assert "on the one cell both finished (per cell: N = 25 0.25): one cell is too few to call it" in note
    assert "**" not in note


def test_size_table_fits_each_size_on_the_shared_cells():
    experiments = {"twohop": {"task": "twohop", "N": [20, 25, 30, 35], "seeds": [0, 1], "model": "L4-d128"},
                   "twohop_small_model": {"task": "twohop", "N": [25, 30, 35], "seeds": [0], "model": "L2-d64"}}
    default = summary([(N, seed, 2.0 * N**2, "bracketed") for N in (20, 25, 30, 35) for seed in (0, 1)])
    small = summary([(N, 0, 5.0 * N**3, "bracketed") for N in (25, 30, 35)]).assign(model="L2-d64")
    summaries = {"twohop": default, "twohop_small_model": small}
    sizes, points = model_comparison.size_table(summaries, experiments, ["twohop_small_model", "twohop"], reps=100)
    assert sizes["model"].tolist() == ["L2-d64", "L4-d128"]
    assert sizes["exponent"].tolist() == pytest.approx([3.0, 2.0])
    assert sizes["cells"].tolist() == [3, 3]  # the default model only on the small model's cells
    assert len(points) == 2 and sizes["parameters"].iloc[0] < sizes["parameters"].iloc[1]
    assert model_comparison.parameter_ratio(sizes) == pytest.approx(sizes["parameters"].iloc[1] / sizes["parameters"].iloc[0])
    assert np.isnan(model_comparison.parameter_ratio(sizes.iloc[:1]))


def test_chain_table_and_note():
    three = summary([(10, 0, 1e4, "bracketed"), (12, 0, 1e4 * 1.2**2.5, "bracketed"), (14, 0, None, "unreachable")])
    summaries = {"twohop": pd.DataFrame(), "threehop": three.assign(task="threehop")}
    fits = {name: summary_exponent(summaries.get(name, pd.DataFrame()), 100) for name in longer_chains.CHAIN_TASKS}
    table, points = longer_chains.chain_table(summaries, {"threehop": {"N": [10, 12, 14]}}, fits)
    assert table["task"].tolist() == ["twohop", "parallel_twohop", "threehop"]
    assert table.set_index("task").loc["threehop", "exponent"] == pytest.approx(2.5)
    assert table["finished cells"].tolist() == [0, 0, 2] and len(points) == 1
    assert views.chains_view(table).frame["task"].tolist() == ["two-hop", "parallel two-hop", "three-hop"]
    note = longer_chains.chain_note(summaries, fits, 0.99)
    assert note.startswith("Three-hop: c = 2.50") and "against the paper's 2.58" in note
    assert "(n_req at N = 10: 10,000; at N = 12: 15,774)" in note
    assert note.endswith("at N = 14 (seed 0) no training set the pool allows reaches 99%")
    both_seeds = pd.concat([three, three.tail(1).assign(seed=1)]).assign(task="threehop")
    assert longer_chains.chain_note({"threehop": both_seeds}, fits, 0.99).endswith("at N = 14 (seeds 0 and 1) no "
                                                                                  "training set the pool allows reaches 99%")
    assert longer_chains.chain_note({}, {}, 0.99) == ""
    unbracketed = {"threehop": three.assign(n_req=np.nan, status="searching", task="threehop")}
    assert longer_chains.chain_table(unbracketed, {}, {})[1] == []  # nothing to draw: no empty chart
    queued = pd.concat([both_seeds, summary([(16, 0, None, "searching"), (16, 1, None, "searching"),
                                             (18, 0, None, "not started")]).assign(task="threehop")])
    assert table["cells"].tolist() == [0, 0, 3]
    assert longer_chains.chain_note({"threehop": queued}, fits, 0.99).endswith(
        "reaches 99%; searching at N = 16 (seeds 0 and 1) and not started at N = 18 (seed 0): not finished, so left "
        "out of the fit (the commands in data/scaling/COMMANDS.txt resume these searches from the probe table)")


def test_fitted_failures_note_counts_failures_that_fitted_their_training_set():
    probes = pd.DataFrame({"success": [True, False, False, False], "final_train": [1.0, 0.995, 0.5, 1.0]})
    assert failing_probes.fitted_failures_note(probes) == (
        " Across the whole table, 2 of 3 failing probes fitted their training set (at least 99%) and still stayed "
        "below the threshold on the ID test.")
    assert failing_probes.fitted_failures_note(probes[probes["success"]]) == ""


def test_summary_bullets_lead_with_the_verdicts_and_set_measured_exponents_beside_the_papers_unjudged():
    fit = {"c": 2.1, "c_low": 1.8, "c_high": 2.4, "interval": "resampling N-cells and the seeds within them", "n_values": 5, "seeds": 2,
           "N_min": 25, "N_max": 50, "r2": 0.97}
    text = findings.summary_bullets(fit, 2.3, {}, "sizes", 1, 10, 1.5, 0.99)
    lines = text.split("\n")
    assert all(line.startswith("* ") for line in lines) and len(lines) == 4
    assert "c = 2.10 (95% interval 1.80 to 2.40" in lines[0] and "N = 25-50, 5 values of N, 2 seeds" in lines[0]
    assert lines[0].endswith("under the authors' give-up rule (the paper's c: 2.26).")
    assert "N^2.30, 0.20 above the measured 2.10 (95% interval 1.80 to 2.40)" in lines[1]
    assert lines[2].startswith("* Model size: not measured yet")
    assert "took 10 probes, 1.5 run-hours, about 0.1 days of one CPU core," in lines[3]
    assert not any(word in text for word in ("inside", "outside", "reproduced"))  # only the verdicts' rule judges
    text = findings.summary_bullets(fit | {"c": 3.0, "c_low": 2.9, "c_high": 3.1}, np.nan, {}, "sizes", 2, 1, 0.1, 0.99)
    assert "* sizes" in text and "Coverage predicts" not in text
    few = fit | {"c_low": np.nan, "c_high": np.nan, "n_values": 3}
    text = findings.summary_bullets(few, 2.3, {}, "sizes", 1, 10, 1.5, 0.99)
    assert "no interval" in text and "Coverage predicts" not in text  # nothing to set coverage's exponent against
    chains = {"threehop": fit | {"c": 2.31}, "parallel_twohop": few}
    text = findings.summary_bullets(fit, 2.3, chains, "sizes", 1, 10, 1.5, 0.99)
    assert "* Longer chains at small N, under the authors' rule: three-hop c = 2.31 (95% interval" in text
    assert "; parallel two-hop c = 2.10 (no interval: 3 values of N are too few" in text and "parallel_twohop" not in text
    led = findings.summary_bullets(fit, 2.3, {}, "sizes", 1, 10, 1.5, 0.99, verdicts="Verdicts.", claims="Claims.")
    assert led.split("\n")[:3] == ["* Verdicts.", "* Claims.", lines[0]]  # what it concludes, then what it measured


def explorer_inputs():
    """Two experiments of one task (two model sizes), their search summaries and the probe table behind them."""
    experiments = {"twohop": {"task": "twohop", "N": [20, 25], "seeds": [0], "model": "L4-d128"},
                   "twohop_small_model": {"task": "twohop", "N": [20], "seeds": [0], "model": "L2-d64"}}
    rows = [("L4-d128", 20, 1000, False, 0.6), ("L4-d128", 20, 1300, True, 0.995), ("L4-d128", 25, 2000, False, 0.4),
            ("L2-d64", 20, 1500, False, 0.7), ("L2-d64", 20, 1900, True, 0.992), ("L2-d64", 30, 9000, True, 0.999)]
    probes = pd.DataFrame(rows, columns=["model", "N", "n_train", "success", "best_type0"]).assign(
        task="twohop", cot=False, seed=0, eligible=4000, final_train=1.0, stopped="gave_up", steps=500, minutes=2.0)
    default = summary([(20, 0, 1140.0, "bracketed"), (25, 0, None, "searching")]).assign(
        low=[1000.0, 2000.0], high=[1300.0, None])
    small = summary([(20, 0, 1688.0, "bracketed")]).assign(model="L2-d64", low=1500.0, high=1900.0)
    return {"twohop": default, "twohop_small_model": small}, experiments, probes


def test_explorer_frames_label_cells_and_keep_only_their_probes():
    summaries, experiments, probes = explorer_inputs()
    cells, rows = explore.explorer_frames(summaries, experiments, probes, 0.99)
    assert cells["experiment"].tolist() == ["twohop (L4-d128)", "twohop (L4-d128)", "twohop_small_model (L2-d64)"]
    assert cells["shown_n"].tolist() == [1140.0, 2000.0, 1688.0]  # unfinished: the largest n probed
    assert len(rows) == 5  # the L2-d64 probe at N = 30 belongs to no searched cell
    assert rows["outcome"].tolist().count("reached 99%") == 2
    assert rows["cell"].iloc[0] == "twohop (L4-d128), N = 20, seed 0"
    empty = explore.explorer_frames({"twohop": pd.DataFrame()}, experiments, probes, 0.99)
    assert all(frame.empty for frame in empty)


def drawn_marks(node: dict) -> list[tuple[str, list[dict]]]:
    """(mark type, items) of every named data mark in a Vega scenegraph, in drawing order."""
    found = [(node["marktype"], node.get("items", []))] if node.get("name", "").endswith("_marks") else []
    for item in node.get("items", []):
        found += drawn_marks(item)
    return found


def test_explorer_chart_links_a_dropdown_and_a_click_to_the_probes():
    summaries, experiments, probes = explorer_inputs()
    chart = explore.probe_explorer(summaries, experiments, probes, 0.99)
    spec = chart.to_dict()
    params = {p["name"]: p for p in spec["params"]}
    assert params["experiment"]["bind"]["options"] == ["twohop (L4-d128)", "twohop_small_model (L2-d64)"]
    assert params["experiment"]["value"] == "twohop (L4-d128)"
    assert params["cell"]["value"] == [{"experiment": "twohop (L4-d128)", "N": 20, "seed": 0}]  # the tightest bracket
    assert params["cell"]["select"]["on"] == "click"
    left, right = spec["hconcat"]
    assert {"filter": "(datum.experiment === experiment)"} in left["layer"][0]["transform"]
    assert right["layer"][0]["transform"] == [{"filter": {"param": "cell"}}]
    assert missing_tooltips(spec) == [] and unexplained_layers(spec) == []
    vlc.vegalite_to_vega(json.dumps(spec), vl_version="5.8")
    # what the live chart shows for the printed selection: the two probes of (L4-d128, N = 20, seed 0)
    drawn = drawn_marks(vlc.vegalite_to_scenegraph(json.dumps(spec))["scenegraph"])
    left_dots, right_dots = (items for kind, items in drawn if kind == "symbol" and len(items) and "fill" in items[0])
    assert len(left_dots) == 2 and len(right_dots) == 2  # two cells of the chosen experiment; the clicked cell's probes
    assert [item["text"] for kind, items in drawn if kind == "text" for item in items
            if item.get("text") == "twohop (L4-d128), N = 20, seed 0"]
    assert explore.probe_explorer({"twohop": pd.DataFrame()}, experiments, probes, 0.99) is None


def test_chapter_four_tables_read_well():
    summaries, experiments, probes = explorer_inputs()
    cells = views.cells_view(summaries["twohop"])
    assert cells.frame.columns[:6].tolist() == ["N", "seed", "search", "largest failing n", "smallest succeeding n",
                                                "n_req (estimate)"]
    assert cells.text["n_req (estimate)"].tolist() == ["1,140", ""] and "nan" not in repr(cells).lower()
    probe_text = views.probes_view(probes).text
    assert probe_text["best ID accuracy"].iloc[1] == "99.5%" and probe_text["reached the threshold"].iloc[1] == "yes"
    comparison = views.exponent_view(twohop_law.exponent_comparison(
        {"c": 2.1, "c_low": 1.9, "c_high": 2.4}, 2.3)).text
    assert comparison["95% interval"].tolist()[:2] == ["1.90 to 2.40", ""] and comparison["c"].iloc[2] == "2.26"
    metrics = metrics_table({"exponent_twohop": 2.2634, "probes": 1234, "ratio": float("nan")}).text
    assert metrics["value"].tolist() == ["2.263", "1,234", ""]
    assert views.sizes_view(pd.DataFrame()).text.empty and views.coverage_fits_view(pd.DataFrame()).text.empty


def test_two_hop_and_failure_charts_have_tooltips():
    s = summary([(N, 0, 2.0 * N**2, "bracketed") for N in (20, 25, 30)])
    cov = pd.DataFrame({"N": [20, 30], "k": 3, "target": 0.99, "n_train": [900.0, 2000.0]})
    charts = [twohop_law.twohop_chart(s, cov, summary_exponent(s, reps=50))]
    pair = s.iloc[1]
    wide = pd.DataFrame({"step": [0, 50], "ID test, n = 1,000 (fails)": [0.1, 0.8], "ID test, n = 1,300 (succeeds)": [0.1, 0.99]})
    covs = pd.DataFrame({"type": ["n = 1,000"] * 2 + ["n = 1,300"] * 2, "k": [1, 2] * 2, "covered": [1, 0.5, 1, 0.7], "n": 100})
    charts.append(failing_probes.failure_chart(wide, covs, pair))
    for chart in charts:
        spec = chart.to_dict()
        assert missing_tooltips(spec) == [] and unexplained_layers(spec) == []
    same = failing_probes.failure_chart(wide, covs.assign(covered=1.0), pair).to_dict()["vconcat"][1]
    assert same["title"]["subtitle"] == "n = 1,000 and n = 1,300 lie within 0.01 point of each other at every k: " \
        "one line hides the other"
    assert same["layer"][0]["encoding"]["y"]["scale"]["domain"] == [99, 100]  # near 100%: the axis zooms, and says so
    assert same["layer"][0]["encoding"]["y"]["title"] == "covered (%), axis from 99%"
    apart = charts[-1].to_dict()["vconcat"][1]
    assert "subtitle" not in apart["title"]  # lines apart: nothing to say
    assert apart["layer"][0]["encoding"]["y"]["scale"]["domain"] == [0, 100]  # half covered: the whole axis
    assert charts[-1].to_dict()["resolve"]["legend"] == {"strokeDash": "independent"}  # chance under its curves


def _architecture_cache() -> tuple[dict, dict]:
    """The default transformer on N = 20-40 and two seeds; a Mamba on N = 20-35, seed 0, with a steeper law."""
    experiments = {"twohop": {"task": "twohop", "N": [20, 25, 30, 35, 40], "seeds": [0, 1], "model": "L4-d128"},
                   "twohop_mamba": {"task": "twohop", "N": [20, 25, 30, 35], "seeds": [0], "model": "mamba-L4-d128"}}
    default = summary([(N, s, 3.0 * N**2.2 * (1.1 if s else 1.0), "bracketed") for N in (20, 25, 30, 35, 40)
                       for s in (0, 1)])
    mamba = summary([(N, 0, 0.5 * N**2.6, "bracketed") for N in (20, 25, 30, 35)]).assign(model="mamba-L4-d128")
    return {"twohop": default, "twohop_mamba": mamba}, experiments


def test_the_architecture_check_fits_both_families_on_the_mambas_cells():
    summaries, experiments = _architecture_cache()
    names = list(model_comparison.ARCHITECTURE_EXPERIMENTS)
    models, points = model_comparison.size_table(summaries, experiments, names, reps=200, shared_cells="twohop_mamba")
    assert models["family"].tolist() == ["transformer", "mamba"] and models["cells"].tolist() == [4, 4]
    assert models["N values"].tolist() == [4, 4] and models["seeds"].tolist() == [1, 1]
    Ns = np.array([20, 25, 30, 35])  # the oracle: a least-squares slope in log-log, by numpy
    default_slope = np.polyfit(np.log(Ns), np.log(3.0 * Ns**2.2), 1)[0]
    mamba_slope = np.polyfit(np.log(Ns), np.log(0.5 * Ns**2.6), 1)[0]
    assert models["exponent"].tolist() == pytest.approx([default_slope, mamba_slope])
    # parameter counts at N = 30 (tests/test_mamba.py checks model_params against the built models)
    params = [model_params("L4-d128", 30, 4), model_params("mamba-L4-d128", 30, 4)]
    assert models["parameters"].tolist() == params and params[1] < params[0] and len(points) == 2
    ratios = model_comparison.size_ratios(summaries, experiments, names)
    expected_ratio = np.exp(np.mean(np.log(0.5 * Ns**2.6 / (3.0 * Ns**2.2))))
    assert list(ratios) == ["mamba-L4-d128"] and ratios["mamba-L4-d128"]["N"].tolist() == [20, 25, 30, 35]
    metrics = model_comparison.architecture_metrics(summaries, experiments, ratios, reps=200)
    assert metrics["exponent_twohop_mamba"] == pytest.approx(mamba_slope)
    assert metrics["exponent_twohop_mamba_n_values"] == 4 and metrics["exponent_twohop_mamba_seeds"] == 1
    assert metrics["n_req_ratio_mamba_to_default"] == pytest.approx(expected_ratio)
    assert [metrics["params_default"], metrics["params_mamba"]] == params
    note = model_comparison.architecture_note(models, ratios, spread=1.2, reference="L4-d128")
    assert f"mamba-L4-d128 (mamba, {params[1]:,} parameters): 4 of 4 cells finished" in note
    assert f"mamba-L4-d128 needs {expected_ratio:.2f} times the data of L4-d128 on the 4 cells" in note
    assert "**less**, against a typical 1.20-fold gap" in note  # 0.55-0.69 per cell, below 1/1.2
    shown = views.architectures_view(models).text
    assert shown["architecture"].tolist() == ["transformer", "mamba"] and shown["parameters"].tolist()[1] == f"{params[1]:,}"


def test_a_models_exponent_is_phrased_with_its_interval_or_why_it_has_none():
    three_N = pd.Series({"interval": twohop_law.interval_text({"c_low": np.nan, "n_values": 3}), "has interval": False,
                         "N values": 3})
    assert model_comparison.interval_phrase(three_N) == "no interval from 3 values of N"
    four_N = pd.Series({"interval": twohop_law.interval_text({"c_low": 1.45, "c_high": 3.21}), "has interval": True,
                        "N values": 4})
    assert model_comparison.interval_phrase(four_N) == "95% interval 1.45 to 3.21"
    sizes = pd.DataFrame([{"model": "L2-d64", "parameters": 1e5, "cells finished": 3, "cells": 4, "exponent": 1.83,
                           "N values": 3, "N low": 30, "N high": 40, "interval": "none (3 N)", "has interval": False,
                           "mean n_req": 14070.0,
                           "unreachable at N": "", "capped at N": ""}])
    note = model_comparison.size_note(sizes, sizes, np.nan, {}, spread=np.nan, reference="x")
    assert "c = 1.83 (no interval from 3 values of N), mean n_req 14,070" in note and "none (" not in note
    # with a seed gap: one end 1.15x off over N = 30-40 tilts the line through the ends by log 1.15 / log(4/3)
    note = model_comparison.size_note(sizes, sizes, np.nan, {}, spread=1.15, reference="x")
    tilt = np.polyfit(np.log([30, 40]), np.log([1.0, 1.15]), 1)[0]
    assert (f"(no interval from 3 values of N; over N = 30-40 the typical 1.15-fold gap between two seeds can move it "
            f"by up to {tilt:.2f})") in note


def test_the_architecture_check_before_the_mamba_has_a_cell():
    summaries, experiments = _architecture_cache()
    summaries["twohop_mamba"] = summaries["twohop_mamba"].assign(n_req=np.nan, low=np.nan, high=np.nan,
                                                                 status="not started", probes=0)
    names = list(model_comparison.ARCHITECTURE_EXPERIMENTS)
    ratios = model_comparison.size_ratios(summaries, experiments, names)
    metrics = model_comparison.architecture_metrics(summaries, experiments, ratios, reps=100)
    assert ratios == {} and np.isnan(metrics["exponent_twohop_mamba"]) and np.isnan(metrics["n_req_ratio_mamba_to_default"])
    assert metrics["exponent_twohop_mamba_n_values"] == 0 and "exponent_twohop_mamba_ci_low" not in metrics
    models, _ = model_comparison.size_table(summaries, experiments, names, reps=100, shared_cells="twohop_mamba")
    note = model_comparison.architecture_note(models, ratios, spread=1.2, reference="L4-d128")
    assert note.endswith("No cell is finished by both architectures yet: nothing to compare.")
    pending = model_comparison.size_cache_note(summaries, {**experiments, "twohop_mamba": BOOK_EXPERIMENTS["twohop_mamba"]},
                                            names, "architecture")
    assert "--model mamba-L4-d128" in pending and "no claim about architecture" in pending


def test_step_costs_compare_the_architectures_on_the_cells_both_probed():
    def probe(model, N, seed, steps, minutes, cot=False):
        return {"task": "twohop", "N": N, "model": model, "seed": seed, "n_train": 1000 + steps, "steps": steps,
                "minutes": minutes, "cot": cot}
    probes = pd.DataFrame([probe("L4-d128", 25, 0, 1000, 2.0), probe("L4-d128", 25, 0, 3000, 6.0),
                           probe("L4-d128", 30, 0, 5000, 50.0),  # a cell the Mamba has not probed: left out
                           probe("L4-d128", 25, 0, 1000, 9.0, cot=True),  # a CoT probe: another task, left out
                           probe("mamba-L4-d128", 25, 0, 1200, 12.0)])
    costs = model_comparison.step_costs(probes, ["L4-d128", "mamba-L4-d128"])
    assert costs["model"].tolist() == ["L4-d128", "mamba-L4-d128"] and costs["probes"].tolist() == [2, 1]
    assert costs["seconds per step"].tolist() == pytest.approx([8.0 * 60 / 4000, 12.0 * 60 / 1200])
    assert costs["x first"].tolist() == pytest.approx([1.0, 0.6 / 0.12])
    note = model_comparison.step_cost_note(costs)
    assert note.startswith(" On the one cell both have probed, a mamba-L4-d128 step took 0.60 s (12 minutes per probe "
                           "over 1 probe), 5.0x the L4-d128's 0.12 s (4 minutes per probe over 2 probes).")
    assert model_comparison.step_cost_note(model_comparison.step_costs(probes, ["L4-d128", "L6-d128"])) == ""


def test_the_default_models_second_exponent_says_it_rests_on_other_cells():
    rows = pd.DataFrame([{"model": "L4-d128", "exponent": 2.33, "N low": 25, "N high": 40, "seeds": 1},
                         {"model": "L2-d64", "exponent": np.nan, "N low": 30, "N high": 40, "seeds": 1}])
    caveat = model_comparison.subset_caveat(rows, "L4-d128")
    assert "L4-d128's c = 2.33 here is fitted on the compared cells only (N = 25-40, 1 seed)" in caveat
    assert "a different set of N and seeds" in caveat
    assert model_comparison.subset_caveat(rows, "L2-d64") == "" and model_comparison.subset_caveat(rows, "x") == ""


def test_the_model_comparison_is_made_under_both_give_up_rules_and_waits_for_reopened_cells():
    from covlib.search.cells import Cell
    from covlib.search.probes import PROBE_COLUMNS

    def probe(model, N, seed, n, ok, steps, floor=0):
        return {c: 0 for c in PROBE_COLUMNS} | {
            "task": "twohop", "N": N, "model": model, "seed": seed, "cot": False, "n_train": n,
            "eligible": 10**6, "success": ok, "stopped": "early_stop" if ok else "gave_up", "steps": steps,
            "first_fit_step": 100, "threshold": 0.99, "give_up_epochs": 100.0, "step_cap": 6000,
            "weight_decay": 0.1, "give_up_floor": floor}

    def bracket(model, N, seed, low, rerun_ok=None):
        """A bracket [low, 1.25 low]; its failing probe gave up 2,400 steps past the fit (it counts under both
        rules) unless ``rerun_ok`` is given: then it gave up early, and its floor rerun ends with that outcome."""
        rows = [probe(model, N, seed, int(1.25 * low), True, 900)]
        if rerun_ok is None:
            return rows + [probe(model, N, seed, low, False, 2500)]
        return rows + [probe(model, N, seed, low, False, 400), probe(model, N, seed, low, rerun_ok, 2500, floor=2000)]

    Ns = (10, 12)
    default = [r for N in Ns for seed, gap in ((0, 1.0), (1, 1.1)) for r in bracket("L4-d128", N, seed, int(2 * gap * N**2))]
    small_held = [r for N in Ns for r in bracket("L2-d64", N, 0, 4 * N**2, rerun_ok=False)]
    experiments = {"twohop": {"model": "L4-d128"}, "twohop_small_model": {"model": "L2-d64"}}
    cells_of = {"twohop": [Cell("twohop", N, "L4-d128", s) for N in Ns for s in (0, 1)],
                "twohop_small_model": [Cell("twohop", N, "L2-d64", 0) for N in Ns]}
    names = ["twohop_small_model", "twohop"]

    held = model_comparison.ratios_by_rule(cells_of, pd.DataFrame(default + small_held), experiments, names, 2000)
    assert held["give_up_floor"].tolist() == [0, 2000] and held["cells"].tolist() == [2, 2]
    assert held["ratio"].tolist() == pytest.approx([2.0, 2.0], rel=0.01)  # twice the default's seed 0
    assert held["seed gap"].tolist() == pytest.approx([1.1, 1.1], rel=0.01)
    assert held["verdict"].tolist() == ["more", "more"] and held["pending"].tolist() == ["", ""]
    note = model_comparison.rule_ratio_note(held, "L4-d128")
    assert note.startswith(" Section 4.7 reruns the lower ends under the floor (100 epochs or 2,000 steps). There, "
                           "L2-d64 needs 2.00 times the data of L4-d128 (per cell: N = 10 2.00, N = 12 2.00; seed gap")
    assert note.endswith("**more**, as under the authors' rule.")
    metrics = model_comparison.rule_ratio_metrics(held)
    assert metrics["n_req_ratio_L2_d64_to_default_floor"] == pytest.approx(2.0, rel=0.01)
    assert metrics["seed_spread_twohop_floor"] == pytest.approx(1.1, rel=0.01)
    assert "n_req_ratio_small_to_default_floor" in model_comparison.rule_ratio_metrics(held, {"L2-d64": "small"})

    # the lower end at N = 10 succeeds under the floor: that cell searches again, and the floor's verdict waits
    small_flipped = bracket("L2-d64", 10, 0, 400, rerun_ok=True) + bracket("L2-d64", 12, 0, 4 * 144, rerun_ok=False)
    flipped = model_comparison.ratios_by_rule(cells_of, pd.DataFrame(default + small_flipped), experiments, names, 2000)
    floor_row = flipped.set_index("give_up_floor").loc[2000]
    assert floor_row["pending"] == "N = 10 (seed 0)" and floor_row["verdict"] == "" and floor_row["cells"] == 1
    assert model_comparison.rule_ratio_note(flipped, "L4-d128") == (
        " Section 4.7 reruns the lower ends under the floor (100 epochs or 2,000 steps). There, L2-d64 waits for "
        "N = 10 (seed 0), still searching under the floor.")
    assert np.isnan(model_comparison.rule_ratio_metrics(flipped)["n_req_ratio_L2_d64_to_default_floor"])
    shown = views.ratios_by_rule_view(flipped, "L4-d128").frame
    assert "waits for N = 10 (seed 0)" in shown.to_string()

    empty = model_comparison.ratios_by_rule(cells_of, pd.DataFrame(), experiments, names, 2000)
    assert empty["cells"].tolist() == [0, 0] and model_comparison.rule_ratio_note(empty, "L4-d128") == ""


def test_a_fit_names_the_cells_it_leaves_out_while_they_search():
    summary = pd.DataFrame({"N": [50, 50, 70, 70], "seed": [0, 1, 0, 1],
                            "status": ["bracketed", "bracketed", "searching", "not started"]})
    text = searches.pending_sentence(summary)
    assert text.startswith("Searching at N = 70 (seed 0) and not started at N = 70 (seed 1): not finished, so left "
                           "out of the fit") and text.endswith(". ")
    assert searches.pending_sentence(summary.assign(status="bracketed")) == ""


def test_the_raised_step_caps_are_named_per_n():
    from covlib.chapters.ch04_how_much_data.twohop_law import raised_cap_note

    rows = pd.DataFrame({"N": [40, 50, 70], "step_cap": [6000, 12000, 30000]})
    note = raised_cap_note(rows, ProbeRules())
    assert note.startswith(" The step cap was 6,000 steps except at N = 50 (12,000) and 70 (30,000): there")
    assert raised_cap_note(rows.iloc[:1], ProbeRules()) == ""


# ---- the exercises ----

def test_exercise_1_the_two_ratios_and_their_checks():
    twohop = pd.DataFrame({"N": [20, 20, 30, 30, 40], "seed": [0, 1, 0, 1, 0], "n_req": [1000, 1200, 2500, 2700, None]})
    fit = {"c": 2.2}
    measured, predicted = exercises.twohop_ratios(twohop, fit)  # the unfinished N = 40 is left out
    assert measured == pytest.approx(2600 / 1100) and predicted == pytest.approx(1.5 ** 2.2)
    assert exercises.check_measured_ratio(2.36, twohop, fit).startswith("right")
    assert exercises.check_measured_ratio(2.4, twohop, fit).startswith("right")  # within 5%
    wrong = exercises.check_measured_ratio(3.0, twohop, fit)
    assert wrong.startswith("wrong: 3.00 is too high") and "2.36" not in wrong
    assert exercises.check_predicted_ratio(2.44, twohop, fit).startswith("right")
    assert exercises.check_predicted_ratio(1.5, twohop, fit).startswith("wrong: 1.50 is too low")
    assert exercises.check_predicted_ratio(None, twohop, fit).startswith("no answer yet")
    assert exercises.check_measured_ratio(2.0, twohop[twohop["N"] == 20], fit).startswith("cannot check")
    assert exercises.check_measured_ratio(2.0, twohop, None).startswith("cannot check")


def test_exercise_1_reads_the_shipped_search_where_a_miniature_finished_too_few_N():
    twohop = pd.DataFrame({"N": [20, 30], "seed": [0, 0], "n_req": [1000.0, 2500.0]})
    assert exercises.law_cells(twohop, {"c": 2.2}, 100)[0] is twohop  # the chapter's own, when it has a law
    shipped, fit, source = exercises.law_cells(twohop.iloc[:1], {"c": 2.2}, 100)
    assert "shipped" in source and exercises.finished_N(shipped) >= 2 and fit is not None
    assert not any(math.isnan(r) for r in exercises.twohop_ratios(shipped, fit))
