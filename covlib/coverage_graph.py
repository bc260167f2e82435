"""A teaching view of the substitution graph (SPEC §2): a few inputs and their neighbours, drawn small.

The full graph has N^m nodes and is never built (``covlib.coverage`` computes its components
without it). For a reader, a neighbourhood is enough: a chosen input x, and for each set of
positions P the inputs y that agree with x outside P and whose P-fragment is in x's class at
level k. ``substitution_neighbourhood`` returns that as a networkx graph (edges labelled by P,
training inputs marked) and ``neighbourhood_chart`` draws it with altair.
"""
from __future__ import annotations

import itertools

import altair as alt
import networkx as nx
import numpy as np
import pandas as pd

from covlib.coverage import (
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
