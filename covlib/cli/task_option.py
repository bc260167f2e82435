"""The task a command works on: a named task, or a formula a reader writes (``--graph``)."""
from __future__ import annotations

import argparse

from covlib.base.errors import CovlibError
from covlib.tasks.graphs import TASKS, get_task

GRAPH_HELP = ('a task written as a formula, in place of a task name: steps node=primitive(args) separated by ";", '
              'inputs x1, x2, ..., output t, e.g. "b=f1(x1,x2); t=f2(b,x3,x1)"')


def add_task_options(p: argparse.ArgumentParser, positional: bool = False) -> None:
    """A task name (positional or ``--task``) and ``--graph``; exactly one of them must be given."""
    help_text = f"one of: {', '.join(TASKS)} (or --graph)"
    if positional:
        p.add_argument("task", nargs="?", default=None, help=help_text)
    else:
        p.add_argument("--task", default=None, help=help_text)
    p.add_argument("--graph", default=None, metavar="FORMULA", help=GRAPH_HELP)


def task_of(args: argparse.Namespace) -> str:
    """The task the arguments name (checked: an unknown name or a malformed formula raises one clear error)."""
    if (args.task is None) == (args.graph is None):
        raise CovlibError("give a task name or --graph FORMULA (exactly one of them)")
    name = args.task if args.task is not None else args.graph
    task = get_task(name)
    return task.name
