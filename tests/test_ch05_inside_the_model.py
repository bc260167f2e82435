"""Inside the model (covlib.chapters.ch05_inside_the_model): presets, the model to analyse, and the chapter's
readings of its IICG, tracing and checkpoint tables."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from covlib.base.errors import CovlibError
from covlib.base.paths import repository_path
from covlib.book.setup import setup_chapter
from covlib.chapters import ch05_inside_the_model as inside_the_model
from covlib.chapters.ch05_inside_the_model import PRESETS
from covlib.training.shipped import EDGE_RUN


def layer_map(values: dict[str, list[float]], value: str = "iicg") -> pd.DataFrame:
    """A long (layer, position, value) table from position -> values by layer."""
    return pd.DataFrame([{"layer": layer, "position": pos, value: v}
                         for pos, vs in values.items() for layer, v in enumerate(vs)])


def test_presets_train_only_at_smoke_and_an_unknown_one_is_an_error(tmp_path):
    assert set(PRESETS) == {"smoke", "default", "paper"}
    assert PRESETS["smoke"]["train"] and PRESETS["default"]["train"] is None and PRESETS["paper"]["train"] is None
    assert PRESETS["paper"]["note"] and not PRESETS["default"]["note"]
    assert setup_chapter("05", "paper", PRESETS, out_dir=tmp_path)["note"].startswith("The paper's 8-layer GPT-2")
    with pytest.raises(CovlibError, match="smoke, default, paper"):
        setup_chapter("05", "full", PRESETS)


def test_model_source_reads_the_readers_run_folder(tmp_path):
    source, dataset_dir, weights = inside_the_model.model_source(None, str(tmp_path / "run"), tmp_path)
    assert source == tmp_path / "run" and dataset_dir is None and weights == {"final": "model.pt"}
    assert inside_the_model.final_weights(tmp_path) is None
    (tmp_path / "weights").mkdir()
    assert inside_the_model.final_weights(tmp_path) == "weights/final.pt"
    assert inside_the_model.final_weights(repository_path(EDGE_RUN["archive"])) == "weights/final.pt"


def test_best_cell_takes_the_largest_value_over_every_layer():
    table = layer_map({"x1": [0.3, 0.1, 0.0], "x2": [0.0, 0.2, 0.25]})
    best = inside_the_model.best_cell(table)
    assert (best["layer"], best["position"]) == (0, "x1")  # the embeddings count
    lens = layer_map({"x1": [0.1, 0.4], "x2": [0.2, 0.3]}, "top1")
    assert inside_the_model.best_cell(lens, "top1")[["layer", "position"]].tolist() == [1, "x1"]
    rows = inside_the_model.at_cell(table, pd.Series({"layer": 2, "position": "x2"}))
    assert rows["iicg"].tolist() == [0.25]


def test_cutoff_note_says_so_only_when_better_covered_items_cluster_more():
    rising = pd.Series({"k<3": 0.31, "k=3": 0.4, "k>3": 0.52})
    assert inside_the_model.cutoff_note(rising) == (
        "At the ID peak, IICG by k-cutoff group: k<3 0.31, k=3 0.40, k>3 0.52. "
        "Better-covered items sit in tighter bridge clusters.")
    assert inside_the_model.cutoff_note(rising[::-1]) == "At the ID peak, IICG by k-cutoff group: k>3 0.52, k=3 0.40, k<3 0.31."


def test_checkpoints_steps_frame_and_correlation():
    metrics = pd.DataFrame({"step": [500, 1000, 1500]})
    assert inside_the_model.checkpoint_step("step_001000", metrics) == 1000
    assert inside_the_model.checkpoint_step("final", metrics) == 1500
    over = pd.DataFrame({"step": [0, 1, 2, 3], "iicg_at_peak": [0.0, 0.1, 0.3, 0.4], "acc_type0": [0.1, 0.2, 0.4, 0.5]})
    assert inside_the_model.checkpoint_correlation(over) == pytest.approx(1.0)  # acc = iicg + 0.1
    assert np.isnan(inside_the_model.checkpoint_correlation(over.iloc[:2]))
    frame = inside_the_model.over_training_frame(over, pd.Series({"layer": 2, "position": "x2"}))
    assert list(frame.columns) == ["step", "value", "series"] and len(frame) == 8
    assert set(frame["series"]) == {"IICG by b at layer 2, x2", "ID test accuracy"}
    assert frame.loc[frame["series"] == "ID test accuracy", "value"].tolist() == [0.1, 0.2, 0.4, 0.5]


@pytest.fixture()
def rank():
    """A 4-layer tracing result in which the bridge sits at x2 in layers 1-2 and at x3 from layer 3."""
    values = {"x1": [1.0, 0.02, 0.0, 0.0, 0.0], "x2": [1.0, 0.96, 0.9, 0.3, 0.0], "x3": [0.0, 0.0, 0.1, 0.8, 0.95]}
    rows = [{"variant": "x2", "metric": "rank", "layer": layer, "position": pos, "value": v}
            for pos, vs in values.items() for layer, v in enumerate(vs)]
    rows += [{"variant": "x1", "metric": "rank", "layer": 0, "position": "x1", "value": 0.5},
             {"variant": "x2", "metric": "prob", "layer": 0, "position": "x1", "value": 0.5}]
    return inside_the_model.rank_map(pd.DataFrame(rows), "x2")


def test_rank_map_and_tracing_note_read_no_cell_fixed_by_construction(rank):
    assert rank.shape == (5, 3) and rank.loc[3, "x3"] == 0.8
    rank_x1 = pd.DataFrame({"x1": [1.0, 0.7, 0.1, 0.0, 0.0], "x2": [0.0, 0.6, 0.5, 0.1, 0.0], "x3": [0.0] * 5})
    note = inside_the_model.tracing_note(rank, rank_x1, 4, "x3")
    assert note.startswith("Changing $x_2$: patching position $x_2$ flips 96% of predictions at layer 1 and 90% at "
                           "layer 2; position x3 flips 80% at layer 3, and from layer 3 on at least half.")
    assert "95%" not in note  # the last position after the last block is the output itself
    assert "2%" not in note  # x1 under x2 corruption is an identity patch
    assert note.endswith("patching position $x_1$ flips 70% of predictions at layer 1 and position $x_2$ 60%: the "
                         "information of $x_1$ leaves its own position for the bridge's, as $b = f_1(x_1, x_2)$ requires.")


def test_the_tracing_note_names_no_layer_as_none(rank):
    rank_x1 = pd.DataFrame({"x1": [1.0, 0.7, 0.1, 0.0, 0.0], "x2": [0.0, 0.6, 0.5, 0.1, 0.0], "x3": [0.0] * 5})
    assert "The bridge sits at $x_2$ in layers 1 and 2, then moves to the last position." in \
        inside_the_model.tracing_note(rank, rank_x1, 4, "x3")
    weak = rank.assign(x2=[1.0, 0.35, 0.2, 0.1, 0.0], x3=[0.0, 0.0, 0.1, 0.3, 0.95])  # nothing reaches half
    note = inside_the_model.tracing_note(weak, rank_x1, 4, "x3")
    assert "none" not in note and "position x3 flips 30% at layer 3. No cell flips half of the predictions" in note
    only_last = rank.assign(x2=[1.0, 0.35, 0.2, 0.1, 0.0])
    assert "No layer at $x_2$ flips half of the predictions; position x3 does from layer 3." in \
        inside_the_model.tracing_note(only_last, rank_x1, 4, "x3")


def test_paper_comparison_leaves_out_the_cells_fixed_by_construction(rank):
    table = inside_the_model.paper_comparison(pd.Series({"layer": 2, "position": "x2"}),
                                              pd.Series({"k<3": 0.3, "k=3": 0.4}), 0.0123, rank, 4, "x3")
    this_book = table.set_index("quantity")["this book (4 layers)"]
    assert this_book["IICG by b, peak (layer, position)"] == "layer 2, x2"
    assert this_book["IICG by b at the peak, k>=3"] == "nan (k>3), 0.40 (k=3)"
    assert this_book["IICG by b, OOD"] == "0.012 (largest cell)"
    assert this_book["tracing (rank): x2 in early layers"] == "93% (layers 1-2)"  # (0.96 + 0.9) / 2
    assert this_book["tracing (rank): last position, upper layers"] == "80% (layer 3; layer 4 is the output itself)"
    assert this_book["tracing: x1 after the embeddings"].startswith("fixed by construction")


def test_the_smoke_model_is_trained_and_its_weights_saved_like_the_shipped_ones(tmp_path):
    run = {**PRESETS["smoke"]["train"], "steps": 60, "checkpoint_every": 20, "checkpoints": (20, 40)}
    source, dataset_dir, weights = inside_the_model.model_source(run, "", tmp_path)
    assert source == tmp_path / "runs" / "mechanisms-smoke" and list(weights) == ["step_000020", "step_000040", "final"]
    assert all((source / "weights" / f"{name}.pt").is_file() for name in weights)
    assert Path(dataset_dir).parent == tmp_path / "datasets"


def test_seed_results_say_whether_each_claim_held_in_every_seed():
    table = pd.DataFrame({"seed": [42, 1, 2], "peak_layer": [2, 2, 1], "peak_position": ["x2", "x2", "x2"],
                          "iicg_peak": [0.70, 0.60, 0.80], "rank_x2_layer1": [0.97, 0.91, 0.40],
                          "cluster order holds": [True, True, True], "route holds": [True, True, False]})
    results = inside_the_model.seed_results(table)
    assert results["iicg_seeds"] == 3
    assert results["iicg_peak_mean"] == pytest.approx(0.70)
    assert results["iicg_peak_sd"] == pytest.approx(0.10)  # sqrt((0.01 + 0.01 + 0) / 2)
    assert results["iicg_peak_same_cell_all_seeds"] == 0  # layer 1 in one seed
    assert results["iicg_order_all_seeds"] == 1 and results["trace_route_all_seeds"] == 0
    assert results["trace_rank_x2_layer1_min"] == pytest.approx(0.40)
    note = inside_the_model.seeds_note(table)
    assert "layer 2 x2, layer 1 x2" in note and "0.70 ± 0.10" in note and "in 2 of 3" in note


# ---- the exercises ----

def test_exercise_1_the_peak_check_says_which_half_is_wrong_without_the_peak():
    peak = pd.Series({"layer": 2, "position": "x3", "iicg": 0.41})
    check = inside_the_model.check_peak
    assert check(2, "x3", peak).startswith("right") and check("2", "x3", peak).startswith("right")
    assert check(1, "x3", peak) == ("wrong: layer 1 is too early; the position is right. Hint: draw the IICG by t "
                                    "over layers and positions as a heatmap, as 5.2 does for b.")
    late = check(3, "x1", peak)
    assert late.startswith("wrong: layer 3 is too late; the position is not x1") and "x3" not in late
    assert check(2, "x1", peak).startswith("wrong: the layer is right")
    assert check("two", "x3", peak).startswith("wrong") and check(None, "x3", peak).startswith("no answer yet")
