"""Figure functions return charts built from the expected (aggregated) data (covlib.figures)."""
from __future__ import annotations

import base64
import json

import altair as alt
import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc
from figure_checks import boolean_tooltips, missing_tooltips, overlay_params, unexplained_layers
from IPython.core.interactiveshell import InteractiveShell

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
from covlib.figures.charts import (
    accuracy_by_cutoff_chart,
    accuracy_curves_chart,
    coinciding_note,
    coverage_by_k_chart,
    overlapping_start_note,
    sweep_chart,
)
from covlib.figures.heatmaps import layer_position_heatmap, over_training_chart
from covlib.figures.live import LIVE_MIMETYPE, chart_title, enable_live_charts
from covlib.figures.required_data import (
    dodged,
    estimates_chart,
    fit_with_extrapolation,
    required_data_chart,
    requirement_frame,
)
from covlib.figures.style import (
    MAX_CHART_WIDTH,
    TRAIN_LABEL,
    drawn_width,
    legend_highlight,
    pending_chart,
    printed_spec,
    reader_spec,
    rounded,
    save_figure,
    wrap_titles,
    zoom,
)
from covlib.figures.tables import reader_table
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
    rows = [[part["title"]["text"] for part in row["hconcat"]] for row in spec["vconcat"]]
    assert sum(rows, []) == list(TASKS), "every task once, in order"
    assert len(rows) < len(TASKS), "graphs share rows where they fit"
    assert drawn_width(reader_spec(spec)) <= MAX_CHART_WIDTH


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


def test_live_renderer_shows_the_spec_with_its_data_a_png_and_a_title():
    """What a notebook cell's output holds: exactly the live spec, a PNG and a text line (the site's interface)."""
    enable_live_charts()
    assert alt.renderers.active == "covlib-live"
    frame = pd.DataFrame({"x": [1, 2, 3], "y": [0.1234567891, 0.5, 2 / 3]})
    chart = alt.Chart(frame, title="Probe chart").mark_point().encode(x="x:Q", y="y:Q", tooltip=["x", "y"])
    data, _ = InteractiveShell.instance().display_formatter.format(chart)
    assert set(data) == {LIVE_MIMETYPE, "image/png", "text/plain"}
    assert LIVE_MIMETYPE == "application/vnd.vegalite.v5+json"
    assert data["text/plain"] == "<altair chart: Probe chart>"
    assert base64.b64decode(data["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
    spec = data[LIVE_MIMETYPE]
    assert isinstance(spec, dict) and spec["$schema"].endswith("/vega-lite/v5.json")
    (rows,) = spec["datasets"].values()  # the data is inline, not a URL
    assert [row["y"] for row in rows] == [0.123457, 0.5, 0.666667]
    assert '"url"' not in json.dumps(spec)


def test_live_specs_compile_with_the_vega_lite_jupyterlab_ships():
    """JupyterLab 4 draws vegalite.v5 with Vega-Lite 5: a chart with a bound control must compile there."""
    enable_live_charts()
    k = alt.param(name="k", value=2, bind=alt.binding_range(min=1, max=3, step=1))
    chart = alt.Chart(pd.DataFrame({"k": [1, 2, 3], "v": [3, 2, 1]})).mark_bar().encode(
        x="k:O", y="v:Q", opacity=alt.condition(alt.datum.k == k, alt.value(1), alt.value(0.3)),
        tooltip=["k", "v"]).add_params(k)
    spec = chart._repr_mimebundle_()[LIVE_MIMETYPE]
    vega = vlc.vegalite_to_vega(json.dumps(spec), vl_version="5.8")
    assert any(signal.get("name") == "k" and "bind" in signal for signal in vega["signals"])


def test_chart_title_looks_into_the_parts_of_a_chart():
    assert chart_title({"title": {"text": ["two", "lines"]}}) == "two lines"
    assert chart_title({"hconcat": [{"mark": "point"}, {"layer": [{"title": "inner"}]}]}) == "inner"
    assert chart_title({"facet": {}, "spec": {"title": "panel"}}) == "panel"
    assert chart_title({"mark": "point"}) == "untitled"


@pytest.fixture
def probes_frame():
    return pd.DataFrame({"N": [20, 25, 30], "n_req": [5091.259962, np.nan, 123456.7], "success": [True, False, None],
                         "model": ["L4-d128", None, "L2-d64"], "share": [0.4912, 0.5, np.nan],
                         "paper": [2.26, None, 2.58]}, index=[7, 8, 9])


def test_reader_table_names_rounds_and_leaves_missing_cells_empty(probes_frame):
    table = reader_table(probes_frame, {"N": "N (tokens)", "n_req": "required data (examples)", "success": "succeeded",
                                        "model": "model", "share": "share of the pool", "paper": "paper's c"},
                         formats={"share": ".1%"}, caption="Two-hop cells")
    assert table.frame.columns.tolist() == ["N (tokens)", "required data (examples)", "succeeded", "model",
                                            "share of the pool", "paper's c"]
    assert table.text.to_dict("list") == {
        "N (tokens)": ["20", "25", "30"], "required data (examples)": ["5,091", "", "123,457"],
        "succeeded": ["yes", "no", ""], "model": ["L4-d128", "", "L2-d64"],
        "share of the pool": ["49.1%", "50.0%", ""], "paper's c": ["2.26", "", "2.58"]}
    html = table._repr_html_()
    assert "row_heading" not in html and ">7<" not in html  # no index
    assert "nan" not in html.lower() and "None" not in html and "<caption>Two-hop cells</caption>" in html
    assert "5,091" in html and "5091.26" not in html and "<details>" not in html
    assert repr(table).splitlines()[0] == "Two-hop cells"


def test_reader_table_rounds_a_column_alike_and_takes_callables():
    frame = pd.DataFrame({"small": [0.01234, 0.5, 0.25], "mid": [2.2634, 12.5, 3.0], "count": [1500.0, 2.0, 30.0],
                          "tiny": [0.000412, 0.0031, 0.0], "flag": [1, 0, 1]})
    table = reader_table(frame, {c: c for c in frame}, formats={"flag": lambda v: "on" if v else "off"})
    assert table.text["small"].tolist() == ["0.012", "0.500", "0.250"]
    assert table.text["mid"].tolist() == ["2.3", "12.5", "3.0"]
    assert table.text["count"].tolist() == ["1,500", "2", "30"]  # whole numbers stored as floats
    assert table.text["tiny"].tolist() == ["0.0004", "0.0031", "0.0000"]
    assert table.text["flag"].tolist() == ["on", "off", "on"]


def test_reader_table_folds_a_long_table():
    frame = pd.DataFrame({"i": range(40)})
    table = reader_table(frame, {"i": "row"}, max_rows=15)
    html = table._repr_html_()
    head, rest = html.split("<details>")
    assert head.count("<tr>") == 16 and rest.count("<tr>") == 26  # header + 15 rows; header + 25 rows folded
    assert "show the other 25 rows" in rest
    text = repr(table).splitlines()
    assert len(text) == 17 and text[-1] == "... and 25 more rows"
    assert "<details>" not in reader_table(frame, {"i": "row"}, max_rows=40)._repr_html_()
    assert "(no rows)" in repr(reader_table(frame.iloc[:0], {"i": "row"}))


def test_reader_table_html_is_stable_and_scoped():
    frame = pd.DataFrame({"a": [1, 2]})
    first, second = (reader_table(frame, {"a": "A"})._repr_html_() for _ in range(2))
    assert first == second  # no random ids: executed notebooks do not change on a rerun
    assert first.startswith('<div class="covlib-table" style="max-width: 100%; overflow-x: auto;">')  # never the page
    assert "#T_covlib_" in first and "font-size: 0.85em" in first  # the style is scoped to this table


def test_reader_table_shows_markup_as_text():
    table = reader_table(pd.DataFrame({"input_text": ["<t_3><t_7>"], "n": [1]}), {"input_text": "<prompt>", "n": "n"},
                         caption="a < b")
    html = table._repr_html_()
    assert "&lt;t_3&gt;&lt;t_7&gt;" in html and "<t_3>" not in html
    assert "&lt;prompt&gt;" in html and "<caption>a &lt; b</caption>" in html
    assert table.text["<prompt>"].iloc[0] == "<t_3><t_7>"  # the plain text keeps the tokens as they are


def test_reader_table_names_a_missing_column(probes_frame):
    with pytest.raises(CovlibError, match="no column 'n_train'.*N, n_req"):
        reader_table(probes_frame, {"N": "N", "n_train": "training examples"})
    with pytest.raises(CovlibError, match="no column 'N \\(tokens\\)'"):
        reader_table(probes_frame, {"N": "N (tokens)"}, formats={"N (tokens)": ",d"})
    with pytest.raises(CovlibError, match="share a header"):
        reader_table(probes_frame, {"N": "x", "n_req": "x"})


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


def test_the_tooltip_check_finds_a_data_mark_without_one():
    point = {"mark": "point", "encoding": {"x": {"field": "a", "type": "quantitative"}}}
    tipped = {"mark": {"type": "line", "point": True}, "encoding": {"tooltip": [{"field": "a"}]}}
    assert missing_tooltips({"layer": [tipped, point]}) == ["chart.layer[1] (point): no tooltip"]
    assert missing_tooltips({"encoding": {"tooltip": {"field": "a"}}, "layer": [point]}) == []  # inherited
    assert missing_tooltips({"mark": {"type": "rect", "tooltip": True}}) == []
    assert missing_tooltips({"layer": [{"mark": "text"}, {"mark": "rule"}]}) == []  # annotations
    assert missing_tooltips({"hconcat": [{"facet": {}, "spec": point}]}) == ["chart.hconcat[0].spec (point): no tooltip"]


def shared_charts():
    """One chart of every shared chart function, on small made-up data."""
    coverage = pd.DataFrame({"type": ["type_0"] * 4 + ["type_1"] * 4, "k": [1, 2, 3, 4] * 2,
                             "covered": [1, 0.9, 0.6, 0.2, 0.8, 0.1, 0, 0], "n": 50})
    metrics = pd.DataFrame({"step": [0, 50, 100], "acc/type_0": [0.1, 0.5, 0.99], "acc/type_1": [0.1, 0.1, 0.1]})
    cutoffs = pd.DataFrame({"k_cutoff": [0, 1, 2], "n": [10, 20, 30], "accuracy": [0.1, 0.5, 0.9],
                            "first_step_0.9": [None, 900, 400]})
    heat = pd.DataFrame({"layer": [0, 0, 1, 1], "position": ["x1", "x2"] * 2, "iicg": [0.1, 0.2, 0.3, 0.9],
                         "by_construction": [False, False, False, True], "items": 40, "panel": "ID"})
    over = pd.DataFrame({"step": [100, 200, 100, 200], "value": [0.1, 0.3, 0.2, 0.9], "series": ["a", "a", "b", "b"]})
    summary = pd.DataFrame({"N": [20, 30], "seed": [0, 0], "n_req": [1000.0, None], "low": [900, 2500],
                            "high": [1100, None], "model": "L4-d128"})
    fit = {"a": 1.0, "c": 2.3, "N_min": 20, "N_max": 30}
    lines = fit_with_extrapolation(fit, draw_to=60)
    reference = pd.DataFrame({"N": [50], "n": [27_000], "series": "authors"})
    return {
        "coverage_by_k": coverage_by_k_chart(coverage, reference={1: 100.0, 2: 99.0}, k_slider=3),
        "accuracy_curves": accuracy_curves_chart(metrics, {"ID": "acc/type_0", "OOD": "acc/type_1"}, "t", chance=0.1),
        "accuracy_by_cutoff": accuracy_by_cutoff_chart(cutoffs),
        "heatmap": layer_position_heatmap(heat, "iicg", "IICG", facet="panel"),
        "over_training": over_training_chart(over, "over training"),
        "required_data": required_data_chart(requirement_frame(summary), lines, reference),
        "pending": pending_chart("t", "covlib run"),
    }


@pytest.mark.parametrize("name", list(shared_charts()))
def test_every_data_mark_of_a_shared_chart_has_a_tooltip_and_is_explained(name):
    spec = shared_charts()[name].to_dict()
    assert missing_tooltips(spec) == [] and unexplained_layers(spec) == []
    assert overlay_params(spec) == [] and boolean_tooltips(spec) == []
    assert drawn_width(reader_spec(spec)) <= MAX_CHART_WIDTH
    vlc.vegalite_to_vega(json.dumps(spec), vl_version="5.8")  # JupyterLab's Vega-Lite 5 draws it too


def test_the_jupyterlab_check_finds_a_parameter_on_a_line_with_points_inside_a_layer():
    """The pattern JupyterLab's Vega-Lite 5.6 fails on ("Duplicate signal name"), as the learning curves had it."""
    frame = pd.DataFrame({"step": [0, 1], "acc": [0.1, 0.9]})
    line = alt.Chart(frame).mark_line(point=True).encode(x="step:Q", y="acc:Q", tooltip=["acc:Q"])
    assert overlay_params(alt.layer(line.add_params(zoom(["x"]))).to_dict()) == [
        "chart.layer[0] (line with an overlay): a parameter JupyterLab cannot draw"]
    assert overlay_params(line.add_params(zoom(["x"])).to_dict()) == []  # alone, it draws
    assert overlay_params(alt.layer(line, line.mark_point().add_params(zoom(["x"]))).to_dict()) == []


def test_the_tooltip_check_finds_true_and_false_in_a_tooltip():
    frame = pd.DataFrame({"x": [1, 2], "escaped": [True, False], "word": ["yes", "no"]})
    flagged = alt.Chart(frame).mark_point().encode(x="x:Q", tooltip=["x:Q", "escaped:N"]).to_dict()
    worded = alt.Chart(frame).mark_point().encode(x="x:Q", tooltip=["x:Q", "word:N"]).to_dict()
    assert boolean_tooltips(flagged) == ["escaped"] and boolean_tooltips(worded) == []


def test_the_width_check_finds_a_chart_wider_than_the_page_and_long_titles_wrap():
    frame = pd.DataFrame({"x": [1, 2], "y": [1, 2]})
    point = alt.Chart(frame).mark_point().encode(x="x:Q", y="y:Q", tooltip=["x:Q"])
    assert drawn_width(alt.hconcat(point.properties(width=400), point.properties(width=400)).to_dict()) > MAX_CHART_WIDTH
    long = "a subtitle that says what every mark of the chart is, in more words than its width holds " * 3
    titled = point.properties(width=300, title=alt.TitleParams("A title", subtitle=long)).to_dict()
    assert drawn_width(titled) > MAX_CHART_WIDTH  # Vega draws a title on one line, however long
    wrapped = wrap_titles(titled)
    assert isinstance(wrapped["title"]["subtitle"], list) and " ".join(wrapped["title"]["subtitle"]) == long.strip()
    assert drawn_width(wrapped) < 400
    assert wrap_titles({"title": "short", "width": 300}) == {"title": {"text": "short"}, "width": 300}


def test_log_and_line_charts_zoom_and_the_k_slider_starts_where_asked():
    charts = shared_charts()
    for name in ("accuracy_curves", "over_training", "required_data"):
        params = charts[name].to_dict()["params"]
        assert any(p.get("bind") == "scales" for p in params), f"{name} cannot be zoomed"
    (slider,) = [p for p in charts["coverage_by_k"].to_dict()["params"] if p["name"] == "chosen_k"]
    assert slider["value"] == 3 and slider["bind"]["input"] == "range" and (slider["bind"]["min"], slider["bind"]["max"]) == (1, 4)
    tips = charts["heatmap"].to_dict()["spec"]["layer"][0]["encoding"]["tooltip"]
    assert [t["title"] for t in tips] == ["panel", "layer", "position", "IICG (within - between)",
                                          "fixed by construction", "items (n)"]


def test_legend_highlight_dims_the_other_marks():
    chosen, opacity = legend_highlight("type")
    spec = alt.Chart(pd.DataFrame({"type": ["a"], "v": [1]})).mark_bar().encode(
        y="v:Q", color="type:N", opacity=opacity, tooltip=["type"]).add_params(chosen).to_dict()
    assert spec["params"][0]["bind"] == "legend" and spec["params"][0]["select"]["fields"] == ["type"]
    assert spec["encoding"]["opacity"]["value"] == 0.2 and spec["encoding"]["opacity"]["condition"]["value"] == 1.0


@pytest.mark.parametrize("name", ["task_graphs", "preimages", "seen_split", "type_proportions"])
def test_chapter_one_charts_have_tooltips(name, dataset):
    charts = {
        "task_graphs": lambda: task_graphs_chart(list(TASKS.values())),
        "preimages": lambda: preimage_chart(preimage_frame(dataset.tables["f1"]), "f1"),
        "seen_split": lambda: fact_status_chart(fact_status_frame(dataset.seen_split["f1"], dataset.seen_used["f1"])),
        "type_proportions": lambda: type_share_chart(type_share_frame(dataset.population, len(dataset.train_inputs),
                                                                      dataset.test_types)),
    }
    spec = charts[name]().to_dict()
    assert missing_tooltips(spec) == [] and unexplained_layers(spec) == []
    if name in ("seen_split", "type_proportions"):  # the chapter's control: a legend that highlights
        assert any(p.get("bind") == "legend" for p in spec.get("params", []) + sum(
            (layer.get("params", []) for layer in spec.get("layer", [])), []))


def test_heatmap_and_over_training_data_keep_the_precision_their_tooltips_show():
    """Float noise below a tooltip's three decimals (a near-zero IICG, say) differs between machines: it must not
    reach the saved figure."""
    heat = pd.DataFrame({"layer": [0, 1], "position": ["x1", "x1"], "iicg": [-0.000424126, 0.12345678]})
    spec = layer_position_heatmap(heat, "iicg", "IICG").to_dict()
    (values,) = [d for d in spec["datasets"].values()]
    assert [str(row["iicg"]) for row in values] == ["0.0", "0.123"]
    over = pd.DataFrame({"step": [1, 2], "value": [0.98765, 0.1], "series": "a"})
    (values,) = [d for d in over_training_chart(over, "t").to_dict()["datasets"].values()]
    assert [row["value"] for row in values] == [0.988, 0.1]


def test_a_chart_names_the_lines_that_share_their_start_and_part_later():
    table = pd.DataFrame({"line": ["a"] * 4 + ["b"] * 4 + ["c"] * 4, "k": [1, 2, 3, 4] * 3,
                          "percent": [100, 100, 100, 100, 100, 99.5, 99, 90, 100, 60, 50, 40]})
    assert overlapping_start_note(table, "line", "percent", x="k") == (
        "a and b up to k = 3 lie within 1 point of each other: one line hides the other there")
    chart = coverage_by_k_chart(table.rename(columns={"line": "type"}).assign(covered=table["percent"] / 100, n=10))
    assert chart.to_dict()["title"]["subtitle"].startswith("a and b up to k = 3")  # the k-coverage chart says it too
    # c meets them at k = 1 only (a crossing, not a hidden line); lines together everywhere are coinciding_note's
    assert overlapping_start_note(table.assign(percent=[100, 100, 100, 100] * 2 + [100, 60, 50, 40]), "line",
                                  "percent", x="k") is None


def test_printed_figures_leave_out_prompts_to_click_or_hover():
    spec = {"title": {"text": "t", "subtitle": ["dots: n_req", "click a dot for its probes"]},
            "encoding": {"color": {"field": "task", "legend": {"title": "task (click to pick)"}}},
            "layer": [{"title": {"text": "u", "subtitle": ["hover a dot"]}}]}
    printed = printed_spec(spec)
    assert printed["title"] == {"text": "t", "subtitle": "dots: n_req"}
    assert printed["encoding"]["color"]["legend"]["title"] == "task"
    assert printed["layer"][0]["title"] == {"text": "u"}  # nothing left of the subtitle: no subtitle
    assert spec["encoding"]["color"]["legend"]["title"] == "task (click to pick)"  # the live chart keeps it
    rows = {"datasets": {"d": [{"title": "hover me (click to pick)"}]}, "data": {"values": [{"title": "(hover)"}]}}
    assert printed_spec(rows) == rows  # the rows drawn are data, whatever their columns are called


def test_series_measured_at_one_N_stand_side_by_side():
    points = pd.DataFrame({"N": [30, 30, 30, 50], "seed": [0, 1, 0, 0], "n_req": [9e3, 8e3, 7e3, 2.6e4],
                           "low": 1.0, "high": 2.0, "series": ["transformer", "transformer", "Mamba", "transformer"]})
    drawn = dodged(points)
    assert drawn["N"].tolist() == [30, 30, 30, 50]  # the tooltip's N stays the measured one
    left, same_series, right, alone = drawn["N_drawn"]
    assert left == same_series < 30 < right and alone == 50  # one place per series; an N of one series stays put
    assert right / left == pytest.approx(10 ** 0.012)
    subtitle = estimates_chart([points], "t").to_dict()["title"]["subtitle"]
    assert subtitle[-1] == "series measured at the same N are drawn side by side, a little apart"


def test_the_required_data_axis_labels_every_measured_N_and_leaves_room_at_its_ends():
    spec = shared_charts()["required_data"].to_dict()
    x = next(layer["encoding"]["x"] for layer in spec["layer"] if "x" in layer.get("encoding", {}))
    # the bracketed N and the reference's, and where the extrapolated line ends (it starts at a measured N)
    assert x["axis"]["values"] == [20, 50, 60] and x["scale"]["padding"] == 10
    lines = fit_with_extrapolation({"a": 1.0, "c": 2.3, "N_min": 20, "N_max": 30}, draw_to=51)
    points = requirement_frame(pd.DataFrame({"N": [20], "seed": [0], "n_req": [1e3], "low": [900], "high": [1100],
                                             "model": "L4-d128"}))
    crowded = required_data_chart(points, lines, pd.DataFrame({"N": [50], "n": [27_000], "series": "authors"}))
    x = next(layer["encoding"]["x"] for layer in crowded.to_dict()["layer"] if "x" in layer.get("encoding", {}))
    assert x["axis"]["values"] == [20, 50]  # an end at 51 would print over the reference's 50


def test_a_chart_names_the_lines_it_hides_under_others():
    table = pd.DataFrame({"type": ["type_0"] * 3 + ["type_1"] * 3 + ["type_2"] * 3, "k": [1, 2, 3] * 3,
                          "percent": [90, 80, 70, 20.1, 0, 0, 20.3, 0.4, 0]})
    assert coinciding_note(table, "type", "percent") == (
        "type_1 and type_2 lie within 1 point of each other at every k: one line hides the other")
    apart = table.assign(percent=[90, 80, 70, 0, 0, 0, 0, 0, 5])
    assert coinciding_note(apart, "type", "percent") is None  # apart at one k of three: both lines show
    covs = table.assign(covered=table["percent"] / 100, n=10)
    assert coverage_by_k_chart(covs).to_dict()["title"]["subtitle"].startswith("type_1 and type_2 lie within 1 point")
    assert coverage_by_k_chart(covs, note="said").to_dict()["title"]["subtitle"] == "said"  # the caller's words win
    with_slider = coverage_by_k_chart(covs, k_slider=2).to_dict()["title"]["subtitle"]
    assert len(with_slider) == 2 and with_slider[0].startswith("type_1 and type_2")
