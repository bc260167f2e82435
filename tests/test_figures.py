"""Figure functions return charts built from the expected (aggregated) data (covlib.figures)."""
from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import pytest

from covlib.base.errors import CovlibError
from covlib.base.paths import FIGURES_ENV
from covlib.chapters.ch01_tasks_and_data import (
    FACT_STATUS,
    fact_status_chart,
    fact_status_frame,
    preimage_chart,
    preimage_frame,
    task_graph_frames,
    task_graphs_chart,
    type_share_chart,
    type_share_frame,
)
from covlib.figures.charts import sweep_chart
from covlib.figures.style import TRAIN_LABEL, enable_png_renderer, pending_chart, rounded, save_figure
from covlib.tasks.datasets import DatasetConfig, generate
from covlib.tasks.graphs import TASKS


@pytest.fixture(scope="module")
def dataset():
    return generate(DatasetConfig("twohop", num_tokens=12, n_train=300, test_size_per_type=40))


def test_task_graph_frames_twohop_layers_and_edges():
    nodes, edges = task_graph_frames(TASKS["twohop"])
    layer = dict(zip(nodes["node"], nodes["layer"]))
    assert layer == {"x1": 0, "x2": 0, "b1": 1, "x3": 1, "t": 2}
    assert dict(zip(nodes["node"], nodes["kind"])) == {"x1": "input", "x2": "input", "x3": "input",
                                                       "b1": "bridge", "t": "output"}
    assert sorted(zip(edges["source"], edges["target"], edges["primitive"])) == [
        ("b1", "t", "f2"), ("x1", "b1", "f1"), ("x2", "b1", "f1"), ("x3", "t", "f2")]


@pytest.mark.parametrize("name", list(TASKS))
def test_task_graph_frames_every_task(name):
    task = TASKS[name]
    nodes, edges = task_graph_frames(task)
    assert set(nodes["node"]) == set(task.input_names) | {hop.output for hop in task.hops}
    assert len(edges) == sum(len(hop.inputs) for hop in task.hops)
    assert (edges["x2"] > edges["x"]).all()  # every edge points to a later layer
    assert not nodes.duplicated(["layer", "y"]).any()  # no two nodes on one spot


def test_nontree_long_edge_does_not_run_through_x3():
    nodes, _ = task_graph_frames(TASKS["nontree"])
    pos = nodes.set_index("node")
    y_at_layer1 = (pos.at["x2", "y"] + pos.at["t", "y"]) / 2  # the x2 -> t edge spans layers 0..2
    assert abs(pos.at["x3", "y"] - y_at_layer1) >= 0.45


def test_task_graphs_chart_is_a_valid_spec():
    chart = task_graphs_chart(list(TASKS.values()))
    assert isinstance(chart, alt.VConcatChart)
    spec = chart.to_dict()
    assert len(spec["vconcat"]) == 2


def test_preimage_frame_counts(dataset):
    frame = preimage_frame(dataset.tables["f1"])
    assert len(frame) == 12 and frame["preimage_size"].sum() == 144
    assert frame["preimage_size"].is_monotonic_decreasing and (frame["balanced"] == 12).all()
    counts = np.bincount(dataset.tables["f1"].reshape(-1), minlength=12)
    assert dict(zip(frame["value"], frame["preimage_size"])) == dict(enumerate(counts))
    constant = preimage_frame(np.zeros((5, 5), dtype=int))
    assert constant["preimage_size"].tolist() == [25, 0, 0, 0, 0]
    chart = preimage_chart(frame, "f1")
    assert chart.layer[0].data is frame
    chart.to_dict()


def test_fact_status_frame(dataset):
    frame = fact_status_frame(dataset.seen_split["f1"], dataset.seen_used["f1"])
    assert len(frame) == 144
    counts = frame["status"].value_counts()
    assert counts[FACT_STATUS[0]] == (~dataset.seen_split["f1"]).sum()
    assert counts[FACT_STATUS[1]] == dataset.seen_used["f1"].sum()
    assert len(fact_status_frame(dataset.seen_split["f1"], dataset.seen_used["f1"], limit=5)) == 25
    with pytest.raises(CovlibError, match="2-argument"):
        fact_status_frame(np.zeros((2, 2, 2), bool), np.zeros((2, 2, 2), bool))
    chart = fact_status_chart(frame, "f1", n_tokens=12)
    assert chart.data is frame
    chart.to_dict()


def test_type_share_frame(dataset):
    frame = type_share_frame(dataset.population, len(dataset.train_inputs), dataset.test_types)
    assert set(frame["group"]) == {"all inputs", "test set"}
    for _, part in frame.groupby("group"):
        assert part["share"].sum() == pytest.approx(1.0)
    everything = frame[frame["group"] == "all inputs"]
    assert everything["count"].sum() == 12**3  # training set + every other input, each once
    test = frame[frame["group"] == "test set"].set_index("category")["count"]
    assert test.sum() == len(dataset.test_types)
    assert test[TRAIN_LABEL] == (dataset.test_types == "train_inferred").sum()
    chart = type_share_chart(frame)
    assert chart.data is frame  # altair lifts the data shared by both layers to the top
    chart.to_dict()


def test_sweep_chart_uses_done_rows_only():
    table = pd.DataFrame({"N": [10, 20, 30], "acc": [0.1, 0.5, 0.9], "status": ["done", "failed", "done"]})
    chart = sweep_chart(table, "N", "acc")
    assert chart.data["N"].tolist() == [10, 30]
    with pytest.raises(CovlibError, match="no column 'missing'"):
        sweep_chart(table, "N", "missing")


def test_save_figure_writes_png_and_svg(tmp_path, monkeypatch):
    chart = alt.Chart(pd.DataFrame({"a": [1, 2], "b": [3, 4]})).mark_bar().encode(x="a:O", y="b:Q")
    paths = save_figure(chart, "00_probe", tmp_path)
    assert [p.name for p in paths] == ["00_probe.png", "00_probe.svg"]
    assert all(p.stat().st_size > 0 for p in paths)
    monkeypatch.setenv(FIGURES_ENV, str(tmp_path / "env"))
    assert save_figure(chart, "00_env")[0].parent == tmp_path / "env"


def test_enable_png_renderer():
    enable_png_renderer()
    assert alt.renderers.active == "png"


def test_pending_chart_names_the_missing_figure_and_its_command():
    chart = pending_chart("Dose-response", "covlib diversity run --experiments dose", lead="not run yet")
    spec = chart.to_dict()
    assert spec["title"]["text"] == "Dose-response"
    lines = [row["line"] for row in chart.data.to_dict("records")]
    assert lines == ["not run yet", "covlib diversity run --experiments dose"]


def test_saved_charts_round_float_noise_away(tmp_path):
    """Two computations that differ in the last bits write the same SVG (the digits a reader sees survive)."""
    def chart(value):
        return alt.Chart(pd.DataFrame({"x": [1, 2], "y": [value, 0.5]})).mark_point().encode(x="x:Q", y="y:Q",
                                                                                           tooltip=["y"])
    a = save_figure(chart(0.000694515276207), "a", tmp_path)
    b = save_figure(chart(0.000694514708544), "b", tmp_path)
    assert a[1].read_bytes() == b[1].read_bytes() and a[0].read_bytes() == b[0].read_bytes()
    assert rounded({"v": [23881.34, 0.1234567, 7]}) == {"v": [23881.3, 0.123457, 7]}
