"""The task families as small graphs of primitive functions (data, not code paths)."""
from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from covlib.base.errors import CovlibError


@dataclass(frozen=True)
class Hop:
    """One primitive application: ``output = primitive(*inputs)``; nodes are named x1.., b1.., t."""

    primitive: str
    inputs: tuple[str, ...]
    output: str


@dataclass(frozen=True)
class Task:
    """A compositional task: its input count, its hops in evaluation order, and naming."""

    name: str
    authors_name: str  # the prefix the authors' scripts use for dataset folders
    n_inputs: int
    hops: tuple[Hop, ...]
    graph: str  # one-line formula, shown to readers

    @cached_property
    def input_names(self) -> tuple[str, ...]:
        return tuple(f"x{i + 1}" for i in range(self.n_inputs))

    @cached_property
    def primitives(self) -> dict[str, int]:
        """Primitive name -> arity, in order of first use."""
        arity: dict[str, int] = {}
        for hop in self.hops:
            if arity.setdefault(hop.primitive, len(hop.inputs)) != len(hop.inputs):
                raise CovlibError(f"task {self.name}: primitive {hop.primitive} used with two arities")
        return arity

    @cached_property
    def bridges(self) -> tuple[str, ...]:
        """Intermediate node names in evaluation order (every hop output but the last)."""
        return tuple(hop.output for hop in self.hops[:-1])

    def table_of_hop(self, same_functions: bool) -> list[str]:
        """Which primitive table each hop reads: its own, or f1 for every hop when shared."""
        if not same_functions:
            return [hop.primitive for hop in self.hops]
        arities = set(self.primitives.values())
        if len(arities) != 1:
            raise CovlibError(
                f"task {self.name} mixes primitives of arities {sorted(arities)}, so one table "
                "cannot serve every hop; drop --same-functions for this task"
            )
        first = self.hops[0].primitive
        return [first] * len(self.hops)

    def table_names(self, same_functions: bool) -> list[str]:
        """The distinct primitive tables a dataset of this task holds."""
        return list(dict.fromkeys(self.table_of_hop(same_functions)))

    def evaluate(
        self, inputs: np.ndarray, tables: dict[str, np.ndarray], same_functions: bool = False
    ) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
        """Run the graph on a batch of inputs (n, m).

        Returns every node's values (x.., b.., t) and, per hop, the flat index of the fact it
        used in its table (for seen-flag look-ups), all vectorised over the batch.
        """
        inputs = np.asarray(inputs)
        if inputs.ndim != 2 or inputs.shape[1] != self.n_inputs:
            raise CovlibError(f"task {self.name} takes inputs of shape (n, {self.n_inputs}), got {inputs.shape}")
        return self.evaluate_columns({name: inputs[:, i] for i, name in enumerate(self.input_names)}, tables,
                                     same_functions)

    def evaluate_columns(
        self, inputs: Mapping[str, np.ndarray], tables: dict[str, np.ndarray], same_functions: bool = False
    ) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
        """``evaluate`` on one array per input node (x1, x2, ...), broadcast against each other: a column each of
        a batch, or an open grid over the whole input space, where each hop's work grows only with the inputs it
        depends on (datasets.space_facts)."""
        values: dict[str, np.ndarray] = dict(inputs)
        fact_index: list[np.ndarray] = []
        for hop, table_name in zip(self.hops, self.table_of_hop(same_functions)):
            table = tables[table_name]
            flat = np.ravel_multi_index(tuple(values[a] for a in hop.inputs), table.shape)
            fact_index.append(flat)
            values[hop.output] = table.reshape(-1)[flat]
        return values, fact_index


_HOP = re.compile(r"^([A-Za-z_]\w*)=([A-Za-z_]\w*)\(([^()]*)\)$")


_INPUT = re.compile(r"^x([1-9]\d*)$")


def _read_hops(formula: str) -> list[Hop]:
    """The hops of a formula as written, each ``node=primitive(arg,...)``, separated by semicolons."""
    hops = []
    for piece in formula.split(";"):
        text = re.sub(r"\s+", "", piece)
        if not text:
            continue
        match = _HOP.match(text)
        if not match:
            raise CovlibError(f"cannot read {piece.strip()!r}: write each step as node=primitive(arg,...), "
                              "e.g. b=f1(x1,x2); t=f2(b,x3)")
        out, prim, args = match.groups()
        names = tuple(args.split(",")) if args else ()
        if not names or "" in names:
            raise CovlibError(f"{piece.strip()!r}: a primitive takes one or more nodes separated by commas")
        hops.append(Hop(prim, names, out))
    if not hops:
        raise CovlibError("the formula is empty: write its steps, e.g. b=f1(x1,x2); t=f2(b,x3)")
    return hops


def _evaluation_order(hops: list[Hop]) -> list[Hop]:
    """The hops in an order where every node is computed before it is read (written order where free)."""
    done, order, left = set(), [], list(hops)
    while left:
        ready = next((h for h in left if all(_INPUT.match(a) or a in done for a in h.inputs)), None)
        if ready is None:
            raise CovlibError(f"the formula has a cycle through {', '.join(sorted(h.output for h in left))}: "
                              "a node cannot depend on itself")
        order.append(ready)
        done.add(ready.output)
        left.remove(ready)
    return order


def _check_nodes(hops: list[Hop]) -> int:
    """Every node read is an input x1.. or computed; each is computed once; t is computed, read by no
    step; every input up to the highest and every intermediate node is used. Returns the input count."""
    outputs = [h.output for h in hops]
    for name in outputs:
        if _INPUT.match(name):
            raise CovlibError(f"{name} is an input and cannot be computed; name the step's result otherwise")
        if outputs.count(name) > 1:
            raise CovlibError(f"node {name} is computed twice; give each step its own result")
    if "t" not in outputs:
        raise CovlibError("the formula has no output t: its last step must be t=primitive(...)")
    read = [a for h in hops for a in h.inputs]
    for name in read:
        if not _INPUT.match(name) and name not in outputs:
            raise CovlibError(f"unknown node {name}: read before any step computes it (inputs are x1, x2, ...)")
    if "t" in read:
        raise CovlibError("t is the output: no step may read it")
    arity: dict[str, int] = {}
    for h in hops:
        if arity.setdefault(h.primitive, len(h.inputs)) != len(h.inputs):
            raise CovlibError(f"primitive {h.primitive} is used with two arities ({arity[h.primitive]} and "
                              f"{len(h.inputs)}); give each shape its own name")
    n_inputs = max(int(_INPUT.match(a).group(1)) for a in read if _INPUT.match(a)) if any(
        _INPUT.match(a) for a in read) else 0
    if n_inputs < 2:
        raise CovlibError("the task needs at least two inputs, x1 and x2")
    for name in [f"x{i + 1}" for i in range(n_inputs)] + [o for o in outputs if o != "t"]:
        if name not in read:
            raise CovlibError(f"unused node {name}: every input up to x{n_inputs} and every intermediate node "
                              "must feed a step")
    return n_inputs


def canonical_hops(formula: str) -> tuple[int, tuple[Hop, ...]]:
    """A formula's input count and hops in evaluation order, with primitives renamed f1, f2, ... and
    intermediate nodes b1, b2, ... in that order (a primitive named twice stays one shared table)."""
    hops = _read_hops(formula)
    n_inputs = _check_nodes(hops)
    order = _evaluation_order(hops)
    prims: dict[str, str] = {}
    nodes: dict[str, str] = {"t": "t"}
    for h in order:
        prims.setdefault(h.primitive, f"f{len(prims) + 1}")
        if h.output != "t":
            nodes[h.output] = f"b{len(nodes)}"
    rename = lambda a: a if _INPUT.match(a) else nodes[a]  # noqa: E731
    return n_inputs, tuple(Hop(prims[h.primitive], tuple(rename(a) for a in h.inputs), nodes[h.output]) for h in order)


def formula_text(hops: tuple[Hop, ...], spaced: bool = True) -> str:
    """Hops written back as a formula (``b`` for a lone intermediate node, as the paper writes two-hop)."""
    lone = [h.output for h in hops if h.output != "t"] == ["b1"]
    name = lambda a: "b" if lone and a == "b1" else a  # noqa: E731
    sep, comma = ("; ", ",") if spaced else (";", ",")
    eq = " = " if spaced else "="
    return sep.join(f"{name(h.output)}{eq}{h.primitive}({comma.join(name(a) for a in h.inputs)})" for h in hops)


def _named(name: str, authors_name: str, formula: str) -> Task:
    n_inputs, hops = canonical_hops(formula)
    return Task(name, authors_name, n_inputs, hops, formula_text(hops))


TASKS: dict[str, Task] = {task.name: task for task in (
    _named("twohop", "twohop", "b=f1(x1,x2); t=f2(b,x3)"),
    _named("parallel_twohop", "parallel2hop", "b1=f1(x1,x2); b2=f2(x3,x4); t=f3(b1,b2)"),
    _named("threehop", "threehop", "b1=f1(x1,x2); b2=f2(b1,x3); t=f3(b2,x4)"),
    _named("nontree", "nontree", "b=f1(x1,x2); t=f2(b,x2,x3)"),
    _named("fivehop", "fivehop", "b1=f1(x1,x2); b2=f2(b1,x3); b3=f3(b2,x4); b4=f4(b3,x5); t=f5(b4,x6)"),
)}


AUTHORS_NAMES = {task.authors_name: task.name for task in TASKS.values()}


def is_formula(name: str) -> bool:
    """Whether a task name is a formula a reader wrote rather than one of the named tasks."""
    return "=" in name or "(" in name


@functools.lru_cache(maxsize=256)
def task_from_formula(formula: str) -> Task:
    """The task a formula describes: the named task when it is one of them (up to the names of its primitives
    and intermediate nodes, so its datasets are that task's), else a new task named by its canonical formula."""
    n_inputs, hops = canonical_hops(formula)
    for task in TASKS.values():
        if task.hops == hops:
            return task
    name = formula_text(hops, spaced=False)
    slug = "graph-" + hashlib.sha1(name.encode()).hexdigest()[:8]
    return Task(name, slug, n_inputs, hops, formula_text(hops))


def formula_of(steps: Mapping[str, str]) -> str:
    """The formula whose steps map each computed node to its primitive application: {"b": "f1(x1,x2)",
    "t": "f2(b,x3)"} is "b=f1(x1,x2); t=f2(b,x3)". A notebook's parameters cell holds a task this way: papermill
    cannot read a parameter line with more than one "=" in it."""
    for node, application in steps.items():
        if not isinstance(node, str) or not isinstance(application, str):
            raise CovlibError(f"the step {node!r}: {application!r} is not text: write each as "
                              "\"node\": \"primitive(arg,...)\", e.g. {\"b\": \"f1(x1,x2)\", \"t\": \"f2(b,x3)\"}")
    return "; ".join(f"{node}={application}" for node, application in steps.items())


def get_task(name: str | Mapping[str, str]) -> Task:
    """Look a task up by its covlib or authors' name, or read it from a formula (as text, or as its steps: see
    formula_of), with an error that lists the choices."""
    if isinstance(name, Mapping):
        return task_from_formula(formula_of(name))
    if name in TASKS:
        return TASKS[name]
    if name in AUTHORS_NAMES:
        return TASKS[AUTHORS_NAMES[name]]
    if is_formula(name):
        return task_from_formula(name)
    raise CovlibError(f"unknown task {name!r}; choose one of: {', '.join(TASKS)}, or write one as a formula "
                      "such as \"b=f1(x1,x2); t=f2(b,x3)\"")
