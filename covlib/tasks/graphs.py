"""The task families as small graphs of primitive functions (data, not code paths)."""
from __future__ import annotations

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
        values: dict[str, np.ndarray] = {name: inputs[:, i] for i, name in enumerate(self.input_names)}
        fact_index: list[np.ndarray] = []
        for hop, table_name in zip(self.hops, self.table_of_hop(same_functions)):
            table = tables[table_name]
            flat = np.ravel_multi_index(tuple(values[a] for a in hop.inputs), table.shape)
            fact_index.append(flat)
            values[hop.output] = table.reshape(-1)[flat]
        return values, fact_index


def _chain(n_hops: int) -> tuple[Hop, ...]:
    """b1 = f1(x1,x2); b_i = f_i(b_{i-1}, x_{i+1}); t = f_n(b_{n-1}, x_{n+1})."""
    hops = [Hop("f1", ("x1", "x2"), "b1" if n_hops > 1 else "t")]
    for i in range(2, n_hops + 1):
        out = "t" if i == n_hops else f"b{i}"
        hops.append(Hop(f"f{i}", (f"b{i - 1}", f"x{i + 1}"), out))
    return tuple(hops)


TASKS: dict[str, Task] = {
    "twohop": Task("twohop", "twohop", 3, _chain(2), "b = f1(x1,x2); t = f2(b,x3)"),
    "parallel_twohop": Task(
        "parallel_twohop",
        "parallel2hop",
        4,
        (Hop("f1", ("x1", "x2"), "b1"), Hop("f2", ("x3", "x4"), "b2"), Hop("f3", ("b1", "b2"), "t")),
        "b1 = f1(x1,x2); b2 = f2(x3,x4); t = f3(b1,b2)",
    ),
    "threehop": Task("threehop", "threehop", 4, _chain(3), "b1 = f1(x1,x2); b2 = f2(b1,x3); t = f3(b2,x4)"),
    "nontree": Task(
        "nontree",
        "nontree",
        3,
        (Hop("f1", ("x1", "x2"), "b1"), Hop("f2", ("b1", "x2", "x3"), "t")),
        "b = f1(x1,x2); t = f2(b,x2,x3)",
    ),
    "fivehop": Task(
        "fivehop", "fivehop", 6, _chain(5), "b1 = f1(x1,x2); b_i = f_i(b_{i-1}, x_{i+1}); t = f5(b4,x6)"
    ),
}


AUTHORS_NAMES = {task.authors_name: task.name for task in TASKS.values()}


def get_task(name: str) -> Task:
    """Look a task up by its covlib or authors' name, with an error that lists the choices."""
    if name in TASKS:
        return TASKS[name]
    if name in AUTHORS_NAMES:
        return TASKS[AUTHORS_NAMES[name]]
    raise CovlibError(f"unknown task {name!r}; choose one of: {', '.join(TASKS)}")
