"""Chapter 2 (coverage): the substitution graph for teaching, coverage against data, and their figures."""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import altair as alt
import networkx as nx
import numpy as np
import pandas as pd

from covlib.analyses.fits import power_fit
from covlib.base.errors import CovlibError
from covlib.base.paper import (
    EXPONENTS,
    REQUIRED_DATA_TWOHOP,
    REQUIRED_DATA_TWOHOP_AUTHORS,
    TYPE0_COVERAGE_TWOHOP_30_4000,
)
from covlib.base.paths import default_root
from covlib.coverage.annotate import annotate_dataset, coverage_by_k, coverage_table
from covlib.coverage.authors import authors_sweep
from covlib.coverage.evidence import coincidences_by_type, independent_pair_evidence, space_answers, true_classes
from covlib.coverage.exact import (
    PairEvidence,
    _check_training,
    all_pair_evidence,
    class_purity,
    coverage_sweep,
    decode_codes,
    encode_inputs,
    fragment_classes,
    k_cutoffs,
    pair_evidence,
    position_label,
    proper_subsets,
)
from covlib.coverage.requirement import data_for_coverage
from covlib.figures.charts import coinciding_note, coverage_by_k_chart
from covlib.figures.exercises import as_number, right, unanswered, unchecked, wrong
from covlib.figures.style import _type_scale, zoom
from covlib.figures.tables import ReaderTable, reader_table
from covlib.search.cells import SearchRules
from covlib.tasks.datasets import DatasetConfig, eligible_count, ensure_dataset, generate
from covlib.tasks.folders import load_dataset

# the functions of covlib's layers the chapter's notebook calls through this module (`import covlib.chapters.ch02_coverage
# as ch02`, then `ch02.generate(...)`), one import away from where each is defined
__all__ = [
    "DatasetConfig",
    "EXPONENTS",
    "TYPE0_COVERAGE_TWOHOP_30_4000",
    "all_pair_evidence",
    "annotate_dataset",
    "authors_sweep",
    "coverage_by_k",
    "coverage_by_k_chart",
    "coverage_table",
    "default_root",
    "ensure_dataset",
    "generate",
    "k_cutoffs",
    "load_dataset",
    "pair_evidence",
    "power_fit",
]


PRESETS = {
    "smoke": {"N": 10, "n_train": 300, "example_N": 6, "scaling_N": [12, 16]},
    "default": {"N": 30, "n_train": 4000, "example_N": 8, "scaling_N": [20, 30, 50, 70]},
    "paper": {"N": 100, "n_train": 80_000, "example_N": 8, "scaling_N": [20, 30, 50, 70, 100]},
}


def coverage_vs_data(task: str, num_tokens: list[int], n_trains: dict[int, list[int]], ks: tuple[int, ...] = (3,),
                     seed: int = 0, test_size_per_type: int = 1000) -> pd.DataFrame:
    """Share of type_0 test items covered at each k, for datasets of growing size (one row per N, n_train, k).

    ``n_trains[N]`` lists the training-set sizes to try at N; sizes at or above the eligible
    count are skipped. Each dataset is generated in memory with ``covlib.tasks.datasets.generate``.
    """

    rows = []
    for n_tok in num_tokens:
        for n in n_trains[n_tok]:
            try:
                ds = generate(DatasetConfig(task, n_tok, n, seed=seed, test_size_per_type=test_size_per_type))
            except CovlibError:  # more examples than eligible inputs at this N
                continue
            table = coverage_by_k(ds, max(ks))
            type0 = table[table["type"] == "type_0"].set_index("k")["covered"]
            rows += [{"N": n_tok, "n_train": n, "k": k, "type0_covered": float(type0[k]),
                      "share_of_eligible": n / ds.eligible_count} for k in ks]
    return pd.DataFrame(rows, columns=["N", "n_train", "k", "type0_covered", "share_of_eligible"])


STATUS_COLOURS = {"training": "#1f77b4", "covered": "#2ca02c", "uncovered": "#d62728"}


def _node_name(tokens: tuple[int, ...]) -> str:
    return "(" + ",".join(str(t) for t in tokens) + ")"


def substitution_neighbourhood(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int,
                               centers: np.ndarray, k: int, max_per_subset: int = 4,
                               evidence: list[PairEvidence] | None = None) -> nx.Graph:
    """The substitution graph at level k around ``centers`` (rows of input tokens), kept small.

    Nodes are named like "(3,7,1)" with attributes tokens, train (bool), center (bool),
    k_cutoff and status ("training", "covered" or "uncovered" at this k). For each centre and
    each P, up to ``max_per_subset`` neighbours are kept (training inputs first);
    ``graph.graph["neighbours"]`` holds the full count per (centre, P). Every edge between kept
    nodes is drawn, labelled with the first P (smallest) that joins them.
    """
    inputs, answers = _check_training(train_inputs, train_answers, num_tokens)
    m = inputs.shape[1]
    centers = np.atleast_2d(np.asarray(centers, dtype=np.int64))
    if evidence is None:
        evidence = [pair_evidence(inputs, answers, num_tokens, p) for p in proper_subsets(m)]
    classes = fragment_classes(inputs, answers, num_tokens, k, evidence)
    train_codes = set(encode_inputs(inputs, num_tokens).tolist())

    chosen: dict[int, None] = {int(c): None for c in encode_inputs(centers, num_tokens)}
    full_counts = {}
    for center in centers:
        for p in proper_subsets(m):
            labels = classes[p]
            own = labels[encode_inputs(center[None, list(p)], num_tokens)[0]]
            mates = np.flatnonzero(labels == own)
            rows = np.repeat(center[None, :], len(mates), axis=0)
            rows[:, list(p)] = decode_codes(mates, num_tokens, len(p))
            codes = encode_inputs(rows, num_tokens)
            codes = codes[codes != encode_inputs(center[None, :], num_tokens)[0]]
            full_counts[(_node_name(tuple(center.tolist())), position_label(p))] = len(codes)
            in_train = np.array([c in train_codes for c in codes.tolist()], dtype=bool)
            for c in codes[np.lexsort((codes, ~in_train))][:max_per_subset].tolist():
                chosen.setdefault(int(c), None)

    codes = np.fromiter(chosen, dtype=np.int64)
    tokens = decode_codes(codes, num_tokens, m)
    cutoffs = coverage_sweep(inputs, answers, num_tokens, tokens, evidence=evidence).cutoffs
    center_codes = set(encode_inputs(centers, num_tokens).tolist())
    graph = nx.Graph(k=k, num_tokens=num_tokens, neighbours=full_counts)
    for code, row, cut in zip(codes.tolist(), tokens.tolist(), cutoffs.tolist()):
        is_train = code in train_codes
        status = "training" if is_train else "covered" if cut >= k else "uncovered"
        graph.add_node(_node_name(tuple(row)), tokens=tuple(row), train=is_train, center=code in center_codes,
                       k_cutoff=int(cut), status=status)
    for x, y in itertools.combinations(tokens.tolist(), 2):
        for p in proper_subsets(m):
            same_context = all(x[q] == y[q] for q in range(m) if q not in p)
            if same_context and classes[p][encode_inputs(np.array([[x[q] for q in p]]), num_tokens)[0]] == \
                    classes[p][encode_inputs(np.array([[y[q] for q in p]]), num_tokens)[0]]:
                graph.add_edge(_node_name(tuple(x)), _node_name(tuple(y)), P=position_label(p), positions=p)
                break
    return graph


def neighbourhood_chart(graph: nx.Graph, seed: int = 0, width: int = 420, height: int = 340,
                        title: str | None = None) -> alt.Chart:
    """Draw a small substitution graph: spring-layout positions, edges coloured by P, nodes by status."""
    pos = nx.spring_layout(graph, seed=seed)
    nodes = pd.DataFrame([
        {"node": n, "x": float(pos[n][0]), "y": float(pos[n][1]), "status": d["status"], "k_cutoff": d["k_cutoff"],
         "center": "chosen" if d["center"] else "neighbour"}
        for n, d in graph.nodes(data=True)
    ])
    edges = pd.DataFrame([
        {"x": float(pos[u][0]), "y": float(pos[u][1]), "x2": float(pos[v][0]), "y2": float(pos[v][1]), "P": d["P"]}
        for u, v, d in graph.edges(data=True)
    ], columns=["x", "y", "x2", "y2", "P"])
    axis = alt.Axis(labels=False, ticks=False, title=None, grid=False, domain=False)
    x = alt.X("x:Q", axis=axis, scale=alt.Scale(padding=20))
    y = alt.Y("y:Q", axis=axis, scale=alt.Scale(padding=20))
    rules = alt.Chart(edges).mark_rule(strokeWidth=1.5, opacity=0.6).encode(
        x=x, y=y, x2="x2:Q", y2="y2:Q", color=alt.Color("P:N", title="substituted P")
    )
    points = alt.Chart(nodes).mark_point(filled=True, opacity=1).encode(
        x=x, y=y,
        color=alt.Color("status:N", title=f"at k={graph.graph.get('k', '?')}",
                        scale=alt.Scale(domain=list(STATUS_COLOURS), range=list(STATUS_COLOURS.values()))),
        shape=alt.Shape("center:N", title=None, scale=alt.Scale(domain=["chosen", "neighbour"],
                                                               range=["diamond", "circle"])),
        size=alt.condition(alt.datum.center == "chosen", alt.value(260), alt.value(110)),
        tooltip=[alt.Tooltip("node:N", title="input (x1,x2,x3)"), alt.Tooltip("center:N", title="role"),
                 alt.Tooltip("status:N", title=f"at k={graph.graph.get('k', '?')}"),
                 alt.Tooltip("k_cutoff:Q", title="k-cutoff")],
    )
    labels = alt.Chart(nodes).mark_text(dy=-12, fontSize=10).encode(x=x, y=y, text="node:N")
    parts = [rules, points, labels] if len(edges) else [points, labels]  # an empty layer has no extent to draw
    chart = alt.layer(*parts).resolve_scale(color="independent").properties(width=width, height=height)
    if title:
        chart = chart.properties(title=title)
    return chart


def coverage_modes_chart(tables: dict[str, pd.DataFrame]) -> alt.FacetChart:
    """The same coverage-by-k table from several algorithms (e.g. faithful vs authors'), side by side."""
    data = pd.concat([t.assign(mode=mode) for mode, t in tables.items()], ignore_index=True)
    data = data.assign(percent=data["covered"] * 100)
    types = data["type"].drop_duplicates().tolist()
    hidden = [f"{mode}: {note}" for mode, rows in data.groupby("mode", sort=False)
              if (note := coinciding_note(rows, "type", "percent"))]
    return alt.Chart(data).mark_line(point=True, strokeWidth=2).encode(
        alt.X("k:O", title="k", axis=alt.Axis(labelAngle=0)),
        alt.Y("percent:Q", title="covered (%)", scale=alt.Scale(domain=[0, 100])),
        alt.Color("type:N", title="test type", scale=_type_scale(types), sort=types, legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("mode:N", title="algorithm"), alt.Tooltip("type:N", title="test type"),
                 alt.Tooltip("k:O", title="k"), alt.Tooltip("percent:Q", title="covered (%)", format=".1f"),
                 alt.Tooltip("n:Q", title="test items", format=",d")],
    ).properties(width=300, height=220).facet(
        column=alt.Column("mode:N", title=None, sort=list(tables), header=alt.Header(labelFontSize=13))
    ).properties(title=alt.TitleParams("Share of test items k-covered, by algorithm", anchor="start",
                                       subtitle=hidden or alt.Undefined))


def purity_chart(frame: pd.DataFrame) -> alt.LayerChart:
    """Share of merged fragment pairs that truly share a bridge (line) and how many pairs merged (bars), per k."""
    base = alt.Chart(frame).encode(alt.X("k:O", title="k", axis=alt.Axis(labelAngle=0)))
    merged = frame["merged_pairs"][frame["merged_pairs"] > 0]
    low, high = (float(merged.min()), float(merged.max())) if len(merged) else (1.0, 10.0)
    tooltip = [alt.Tooltip("k:O", title="k"), alt.Tooltip("merged_pairs:Q", title="fragment pairs merged", format=","),
               alt.Tooltip("purity:Q", title="share with the same bridge", format=".1%")]
    # a log axis has no zero: a k without merged pairs draws no bar (and would stretch the scale to zero)
    bars = base.transform_filter("datum.merged_pairs > 0").mark_bar(color="#c9d6e8", opacity=0.9).encode(
        alt.Y("merged_pairs:Q", title="fragment pairs merged into one class (log)", stack=None,  # no zero on a log axis
              scale=alt.Scale(type="log", domain=[low / 2, high * 2], nice=False),
              axis=alt.Axis(values=[10 ** e for e in range(int(np.floor(np.log10(low / 2))),
                                                           int(np.ceil(np.log10(high * 2))) + 1)], format=",")),
        tooltip=tooltip)
    line = base.mark_line(point=alt.OverlayMarkDef(size=50, color="#2e7d32"), color="#2e7d32", strokeWidth=2.5).encode(
        alt.Y("purity:Q", title="share of merged pairs with the same bridge", axis=alt.Axis(format="%"),
              scale=alt.Scale(domain=[0, 1])),
        tooltip=tooltip)
    return alt.layer(bars, line).resolve_scale(y="independent").properties(
        width=420, height=240,
        title=alt.TitleParams("What equivalence classes group together, P = {x1, x2}", anchor="start",
                              subtitle="bars (left axis): fragment pairs merged; green line (right axis): share of "
                                       "them that share the bridge"))


def coverage_vs_data_chart(frame: pd.DataFrame, k: int) -> alt.LayerChart:
    """type_0 coverage against the number of training examples, one line per N, at level ``k``; when ``frame``
    holds several k, a slider picks the k drawn (the printed figure shows ``k``). Drag and scroll to zoom."""
    data = frame.assign(percent=frame["type0_covered"] * 100)
    ks = sorted(data["k"].unique().tolist())
    if k not in ks:
        raise CovlibError(f"coverage_vs_data_chart: k={k} is not in the table (it holds k = {ks}); compute it with "
                          f"coverage_vs_data(..., ks=(..., {k}))")
    chosen = alt.param(name="coverage_k", value=int(k),
                       bind=alt.binding_range(min=int(ks[0]), max=int(ks[-1]), step=1, name="k: ")) \
        if len(ks) > 1 else None
    shown = alt.Chart(data).transform_filter(alt.datum.k == (chosen if chosen is not None else k))
    lines = shown.mark_line(point=alt.OverlayMarkDef(size=45), strokeWidth=2).encode(
        alt.X("n_train:Q", title="training examples", axis=alt.Axis(format="~s"),  # short labels survive on a log axis
              scale=alt.Scale(type="log", domain=[float(data["n_train"].min()) * 0.8, float(data["n_train"].max()) * 1.25])),
        alt.Y("percent:Q", title="type_0 items k-covered (%)", scale=alt.Scale(domain=[0, 100])),
        alt.Color("N:O", title="N", scale=alt.Scale(scheme="viridis")),
        tooltip=[alt.Tooltip("N:O", title="N (tokens)"), alt.Tooltip("k:O", title="k"),
                 alt.Tooltip("n_train:Q", title="training examples", format=","),
                 alt.Tooltip("percent:Q", title="type_0 items k-covered (%)", format=".1f"),
                 alt.Tooltip("share_of_eligible:Q", title="share of the ID-eligible inputs", format=".1%")],
    ).add_params(zoom(["x"]))
    if chosen is not None:
        lines = lines.add_params(chosen)
    subtitle = f"k = {k} in print; the live chart has a slider over k = {ks[0]}-{ks[-1]}" if chosen is not None \
        else alt.Undefined
    return lines.properties(width=420, height=260, title=alt.TitleParams(
        "Coverage needs more data as N grows", subtitle=subtitle, anchor="start"))


def fragment_label(fragment_id: int, num_tokens: int) -> str:
    """A fragment over P = {x1, x2} given by its id x1 * N + x2, written as its tokens "(x1, x2)"."""
    return f"({fragment_id // num_tokens}, {fragment_id % num_tokens})"


def fragment_pairs(evidence: PairEvidence, bridges: np.ndarray, num_tokens: int) -> pd.DataFrame:
    """Contradiction-free fragment pairs over {x1, x2}, most shared contexts first, with whether the hidden
    bridges (``bridges[fragment id]``) agree: what the evidence sees next to what it cannot see."""
    return pd.DataFrame({
        "fragment a": [fragment_label(f, num_tokens) for f in evidence.left],
        "fragment a'": [fragment_label(f, num_tokens) for f in evidence.right],
        "shared contexts (all agree)": evidence.count,
        "same bridge? (hidden)": bridges[evidence.left] == bridges[evidence.right],
    }).sort_values("shared contexts (all agree)", ascending=False, kind="stable")


def shared_context_answers(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int,
                           a: int, a2: int) -> pd.DataFrame:
    """The training answers of fragments ``a`` and ``a2`` (ids over {x1, x2}) side by side, one row per
    context x3 in which both occur: the evidence behind their equivalence."""
    train = pd.DataFrame(train_inputs, columns=["x1", "x2", "x3"]).assign(t=train_answers)
    train["fragment"] = train["x1"] * num_tokens + train["x2"]
    side = train[train["fragment"].isin([a, a2])].pivot_table(index="x3", columns="fragment", values="t")
    side.columns = [f"t for {fragment_label(c, num_tokens)}" for c in side.columns]
    return side.dropna().astype(int)


def purity_by_k(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int, bridges: np.ndarray,
                max_k: int, evidence: list[PairEvidence]) -> pd.DataFrame:
    """Per k = 1..max_k: how many pairs of training fragments over {x1, x2} the k-equivalence classes merge,
    and the share of them with the same hidden bridge (``bridges[fragment id]``), to show why k must exceed 1."""
    present = np.zeros(num_tokens * num_tokens, dtype=bool)
    present[train_inputs[:, 0] * num_tokens + train_inputs[:, 1]] = True
    rows = []
    for k in range(1, max_k + 1):
        labels = fragment_classes(train_inputs, train_answers, num_tokens, k, evidence)[(0, 1)]
        merged, purity = class_purity(labels, bridges, present)
        rows.append({"k": k, "merged_pairs": merged, "purity": purity})
    return pd.DataFrame(rows)


def neighbourhood_examples(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int,
                           pools: Sequence[np.ndarray], evidence: list[PairEvidence], seed: int, k: int = 3,
                           candidates: int = 20, max_per_subset: int = 4) -> list[nx.Graph]:
    """For each pool of inputs (empty pools skipped), the substitution neighbourhood at level k with the most
    neighbours among ``candidates`` random members: the inputs worth drawing."""
    rng = np.random.default_rng(seed)
    graphs = []
    for pool in pools:
        if not len(pool):
            continue
        picks = [substitution_neighbourhood(train_inputs, train_answers, num_tokens, center, k=k,
                                            max_per_subset=max_per_subset, evidence=evidence)
                 for center in pool[rng.permutation(len(pool))[:candidates]]]
        graphs.append(max(picks, key=lambda g: sum(g.graph["neighbours"].values())))
    return graphs


def graph_center(graph: nx.Graph) -> str:
    """The name of the input a substitution neighbourhood was drawn around."""
    return next(n for n, d in graph.nodes(data=True) if d["center"])


def neighbour_counts(graph: nx.Graph) -> dict[str, int]:
    """Number of neighbours of the centre per substituted P (only the P that have any), counted in full."""
    return {p: c for (_, p), c in graph.graph["neighbours"].items() if c}


def coverage_survey(token_counts: Sequence[int], seed: int) -> pd.DataFrame:
    """Per N, the training-set size that 3-covers 90% of type_0 (bisection), next to the data the paper
    needs for 0.99 accuracy and its superseded early-draft numbers."""
    survey = pd.DataFrame([data_for_coverage("twohop", n_tok, k=3, target=0.9, seed=seed) for n_tok in token_counts])
    survey["paper: data for 0.99 accuracy"] = survey["N"].map(REQUIRED_DATA_TWOHOP_AUTHORS)
    survey["paper's early draft (superseded)"] = survey["N"].map(REQUIRED_DATA_TWOHOP)
    return survey


def survey_sizes(survey: pd.DataFrame, factors: Sequence[float] = (0.5, 0.75, 1.0, 1.5, 2.5)) -> dict[int, list[int]]:
    """Training sizes to try at each N of ``coverage_survey``: its required size times each factor."""
    return {n: sorted({int(f * r) for f in factors}) for n, r in zip(survey["N"], survey["n_train"])}


def coverage_metrics(num_tokens: int, n_train: int, table: pd.DataFrame, purity: pd.DataFrame, max_k: int,
                     exponent: float) -> dict[str, Any]:
    """What the chapter records for sweeps: type_0 coverage per k, class purity at k = 1 and 3, the fitted exponent."""
    type0_row = table[table["type"] == "type_0"].set_index("k")["covered"]
    return {
        "N": num_tokens, "n_train": n_train,
        **{f"type0_covered_k{k}": float(type0_row[k]) for k in range(1, max_k + 1)},
        "purity_k1": float(purity.loc[purity["k"] == 1, "purity"].iloc[0]),
        "purity_k3": float(purity.loc[purity["k"] == 3, "purity"].iloc[0]),
        "coverage_exponent": exponent,
    }



# where the definition misleads: k shared contexts that share one coincidence
COINCIDENCE_TASK = "b=f1(x1,x2,x3); t=f2(b,x4)"  # a first hop that reads three inputs


def coincidence_pairs(formula: str, N: int, n_train: int, seed: int, k: int = 3) -> pd.DataFrame:
    """Per set of positions P: the fragment pairs k-equivalent by the definition, how many of them are truly
    equivalent (the same output in every context of the input space), and how many rest on contexts that are not
    independent (some context position takes fewer than k values over them: one value stands behind several)."""
    ds = generate(DatasetConfig(formula, N, n_train, seed=seed, test_size_per_type=0))
    inputs, answers = _check_training(ds.train_inputs, ds.evaluate(ds.train_inputs)["t"], N)
    everything = space_answers(ds)
    rows = []
    for P in proper_subsets(inputs.shape[1]):
        ev, ind = pair_evidence(inputs, answers, N, P), independent_pair_evidence(inputs, answers, N, P)
        truth = true_classes(everything, N, inputs.shape[1], P)
        equivalent = ev.count >= k
        if not equivalent.any():
            continue
        rows.append({"P": position_label(P), "pairs": int(equivalent.sum()),
                     "truly equivalent": int((equivalent & (truth[ev.left] == truth[ev.right])).sum()),
                     "contexts not independent": int((equivalent & (ind.count < k)).sum())})
    return pd.DataFrame(rows)


def coincidence_coverage(formula: str, N: int, n_train: int, seed: int, k: int = 3) -> pd.DataFrame:
    """The share of ID and OOD test items k-covered by the definition and through true equivalences only (rows),
    for the reader."""
    row = coincidences_by_type(formula, N, n_train, seed, k)
    return pd.DataFrame({"items": ["ID (type_0)", "OOD (a fact unseen)"],
                         "definition": [row["id_paper"], row["ood_paper"]],
                         "true equivalences only": [row["id_sound"], row["ood_sound"]]})


def coincidence_pairs_view(pairs: pd.DataFrame, k: int = 3) -> ReaderTable:
    """``coincidence_pairs`` for the reader."""
    return reader_table(pairs, {"P": "positions P", "pairs": f"{k}-equivalent fragment pairs",
                                "truly equivalent": "truly equivalent",
                                "contexts not independent": f"fewer than {k} values at some context position"})


def coincidence_coverage_view(table: pd.DataFrame, k: int = 3) -> ReaderTable:
    """``coincidence_coverage`` for the reader."""
    return reader_table(table, {"items": "test items", "definition": f"{k}-covered by the definition",
                                "true equivalences only": f"{k}-covered through true equivalences"},
                        formats={"definition": ".0%", "true equivalences only": ".0%"})


# What the reader sees: each table the chapter shows, with headers that say what a column is.

def fragment_pairs_view(pairs: pd.DataFrame, rows: int = 8) -> ReaderTable:
    """The first ``rows`` of ``fragment_pairs`` for the reader."""
    return reader_table(pairs.head(rows), {c: c for c in pairs.columns},
                        caption=f"the {min(rows, len(pairs))} fragment pairs over {{x1, x2}} with the most shared contexts")


def shared_context_view(side: pd.DataFrame) -> ReaderTable:
    """``shared_context_answers`` for the reader: one row per shared context x3."""
    frame = side.reset_index()
    return reader_table(frame, {"x3": "shared context x3", **{c: c for c in side.columns}})


def purity_view(purity: pd.DataFrame) -> ReaderTable:
    """``purity_by_k`` for the reader."""
    return reader_table(purity, {"k": "k", "merged_pairs": "fragment pairs merged into one class",
                                 "purity": "share of them with the same bridge"}, formats={"purity": ".1%"})


def coverage_percent_view(tables: dict[str, pd.DataFrame], caption: str) -> ReaderTable:
    """Coverage tables (``coverage_by_k``, one per algorithm) as percentages: a row per (algorithm, test type),
    a column per k; the algorithm column is left out when there is one table."""
    rows = []
    for mode, table in tables.items():
        wide = table.pivot(index="type", columns="k", values="covered").reindex(table["type"].drop_duplicates()) * 100
        wide.columns = [f"k={k}" for k in wide.columns]
        rows.append(wide.reset_index().assign(algorithm=mode))
    frame = pd.concat(rows, ignore_index=True)
    k_columns = [c for c in frame.columns if c.startswith("k=")]
    columns = ({"algorithm": "algorithm"} if len(tables) > 1 else {}) | {"type": "test type"} | {c: c for c in k_columns}
    return reader_table(frame, columns, formats=dict.fromkeys(k_columns, ".1f"), caption=caption)


def survey_view(survey: pd.DataFrame) -> ReaderTable:
    """``coverage_survey`` for the reader: the data that 3-covers 90% of type_0 beside the paper's numbers."""
    return reader_table(survey, {"N": "N (tokens)", "n_train": "data to 3-cover 90% of type_0",
                                 "eligible": "ID-eligible inputs",
                                 "paper: data for 0.99 accuracy": "paper: data for 99% accuracy",
                                 "paper's early draft (superseded)": "paper's early draft (superseded)"})


# --- the exercises: the quantity each asks for, and its check (the solution cells show how to compute it) ---------


def half_covered_k(table: pd.DataFrame, test_type: str = "type_0") -> int | None:
    """Exercise 1: the smallest k at which fewer than half of the ``test_type`` items are k-covered, read off a
    coverage table (columns type, k, covered); None when at least half stay covered up to its largest k."""
    shares = table[table["type"] == test_type].set_index("k")["covered"]
    below = shares[shares < 0.5]
    return int(below.index.min()) if len(below) else None


def check_half_k(answer: Any, table: pd.DataFrame, name: str = "my_half_k") -> str:
    """Exercise 1: a reader's smallest k with fewer than half of the type_0 items covered. A wrong answer learns
    whether it is too high or too low, and why, from its own row of the table; never the right k."""
    how = "read the type_0 row of the coverage table of 2.3 from left to right (or move the chart's k slider)"
    truth = half_covered_k(table)
    if truth is None:
        return unchecked(f"at least half of the type_0 items stay covered up to k = {int(table['k'].max())}: raise "
                         "max_k to find where they fall below one half")
    if answer is None:
        return unanswered(name, how)
    value = as_number(answer)
    if value is None or not value.is_integer():
        return wrong(f"{name} is a whole number, a k, not {answer!r}.")
    k = int(value)
    if k == truth:
        return right(f"k = {truth} is the smallest k with fewer than half of the type_0 items covered.")
    shares = table[table["type"] == "type_0"].set_index("k")["covered"]
    if k < truth:
        share = f" ({shares[k]:.0%})" if k in shares else ""
        return wrong(f"k = {k} is too low: at that k, at least half of the type_0 items are still covered{share}.")
    return wrong(f"k = {k} is too high: fewer than half are covered there, but it is not the first k where that "
                 "happens.")


def exercise_train_size(N: int, n_train: int, seed: int) -> int:
    """Exercise 2's training-set size when the reader sets none: twice the chapter's, or, when that does not fit
    in the ID pool at this preset (at N = 10 twice 300 exceeds the 479 ID-eligible inputs), the largest size the
    required-data search would try (the pool less a test set)."""
    return min(2 * n_train, SearchRules().largest_n(eligible_count("twohop", N, seed)))


def more_data_coverage(N: int, n_try: int, seed: int, k: int = 3, test_size_per_type: int = 500) -> float:
    """Exercise 2: the share of type_0 items k-covered by a training set of ``n_try`` twohop examples at N.
    Raises CovlibError naming ``exercise_n_train`` when the ID pool is too small for it."""
    pool = eligible_count("twohop", N, seed)
    if n_try >= pool:
        raise CovlibError(f"exercise_n_train={n_try} is not below the {pool} ID-eligible inputs of twohop at N={N}: "
                          f"set it to at most {pool - 1}", parameter="exercise_n_train")
    table = coverage_by_k(generate(DatasetConfig("twohop", N, n_try, seed=seed,
                                                 test_size_per_type=test_size_per_type)), k)
    return float(table[(table["type"] == "type_0") & (table["k"] == k)]["covered"].iloc[0])


def more_data_text(N: int, n_train: int, n_try: int | None, seed: int, table: pd.DataFrame, k: int = 3) -> str:
    """Exercise 2 in one sentence: the share of type_0 items k-covered with ``n_try`` examples (None: the size
    exercise_train_size picks) beside this chapter's share (``table``), or why the ID pool cannot hold ``n_try``."""
    n_try = n_try or exercise_train_size(N, n_train, seed)
    now = float(table[(table["type"] == "type_0") & (table["k"] == k)]["covered"].iloc[0])
    try:
        more = more_data_coverage(N, n_try, seed, k)
    except CovlibError as exc:
        return str(exc)
    return f"with {n_try:,} examples, {more:.1%} of type_0 items are {k}-covered (with this chapter's {n_train:,}: {now:.1%})"
