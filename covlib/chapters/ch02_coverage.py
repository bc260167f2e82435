"""Chapter 2 (coverage): the substitution graph for teaching, coverage against data, and their figures."""
from __future__ import annotations

import itertools

import altair as alt
import networkx as nx
import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.coverage.annotate import coverage_by_k
from covlib.coverage.exact import (
    PairEvidence,
    _check_training,
    coverage_sweep,
    decode_codes,
    encode_inputs,
    fragment_classes,
    pair_evidence,
    position_label,
    proper_subsets,
)
from covlib.figures.style import _type_scale
from covlib.tasks.datasets import DatasetConfig, generate


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
        tooltip=["node:N", "status:N", "k_cutoff:Q"],
    )
    labels = alt.Chart(nodes).mark_text(dy=-12, fontSize=10).encode(x=x, y=y, text="node:N")
    chart = alt.layer(rules, points, labels).resolve_scale(color="independent").properties(width=width, height=height)
    if title:
        chart = chart.properties(title=title)
    return chart


def coverage_modes_chart(tables: dict[str, pd.DataFrame]) -> alt.FacetChart:
    """The same coverage-by-k table from several algorithms (e.g. faithful vs authors'), side by side."""
    data = pd.concat([t.assign(mode=mode) for mode, t in tables.items()], ignore_index=True)
    data = data.assign(percent=data["covered"] * 100)
    types = data["type"].drop_duplicates().tolist()
    return alt.Chart(data).mark_line(point=True, strokeWidth=2).encode(
        alt.X("k:O", title="k", axis=alt.Axis(labelAngle=0)),
        alt.Y("percent:Q", title="covered (%)", scale=alt.Scale(domain=[0, 100])),
        alt.Color("type:N", title="test type", scale=_type_scale(types), sort=types),
        tooltip=["mode", "type", "k", alt.Tooltip("percent:Q", format=".1f")],
    ).properties(width=300, height=220).facet(
        column=alt.Column("mode:N", title=None, sort=list(tables), header=alt.Header(labelFontSize=13))
    )


def purity_chart(frame: pd.DataFrame) -> alt.LayerChart:
    """Share of merged fragment pairs that truly share a bridge (line) and how many pairs merged (bars), per k."""
    base = alt.Chart(frame).encode(alt.X("k:O", title="k", axis=alt.Axis(labelAngle=0)))
    bars = base.mark_bar(color="#c9d6e8", opacity=0.9).encode(
        alt.Y("merged_pairs:Q", title="fragment pairs merged into one class (log)", scale=alt.Scale(type="log")))
    line = base.mark_line(point=True, color="#2e7d32", strokeWidth=2.5).encode(
        alt.Y("purity:Q", title="share of merged pairs with the same bridge", axis=alt.Axis(format="%"),
              scale=alt.Scale(domain=[0, 1])),
        tooltip=["k", "merged_pairs", alt.Tooltip("purity:Q", format=".1%")])
    return alt.layer(bars, line).resolve_scale(y="independent").properties(
        width=420, height=240,
        title=alt.TitleParams("What equivalence classes group together, P = {x1, x2}", anchor="start"))


def coverage_vs_data_chart(frame: pd.DataFrame, k: int) -> alt.Chart:
    """type_0 coverage at level k against the number of training examples, one line per N."""
    data = frame[frame["k"] == k].assign(percent=lambda d: d["type0_covered"] * 100)
    return alt.Chart(data).mark_line(point=True, strokeWidth=2).encode(
        alt.X("n_train:Q", title="training examples",
              scale=alt.Scale(type="log", domain=[float(data["n_train"].min()) * 0.8, float(data["n_train"].max()) * 1.25])),
        alt.Y("percent:Q", title=f"type_0 items {k}-covered (%)", scale=alt.Scale(domain=[0, 100])),
        alt.Color("N:O", title="N", scale=alt.Scale(scheme="viridis")),
        tooltip=["N", "n_train", alt.Tooltip("percent:Q", format=".1f")],
    ).properties(width=420, height=260,
                 title=alt.TitleParams(f"Coverage needs more data as N grows (k = {k})", anchor="start"))
