"""The `covlib` command line. A command's options (covlib.cli.arguments.NAME) are imported apart from its work
(covlib.cli.NAME), and only for the command given: `--help` never waits for torch."""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from covlib.base.errors import CovlibError

COMMANDS: dict[str, tuple[str, str]] = {
    "generate": ("covlib.cli.generate", "write a task's dataset folder in the authors' format"),
    "coverage": ("covlib.cli.coverage", "annotate a dataset with k-cutoffs and coverage by k"),
    "train": ("covlib.cli.train", "train a small transformer on a dataset folder"),
    "book": ("covlib.cli.book", "execute the book's chapters with papermill"),
    "sweep": ("covlib.cli.sweep", "run a chapter over a grid of parameters"),
    "site": ("covlib.cli.site", "build the executed chapters into a static HTML book (offline)"),
    "analyze": ("covlib.cli.analyze", "IICG, causal tracing and logit lens of a trained run (chapter 5)"),
    "predict": ("covlib.cli.predict", "coverage's predicted training data per N, before any training"),
    "scaling": ("covlib.cli.scaling", "search the training data a model needs, and what coverage predicts"),
    "diversity": ("covlib.cli.diversity", "the diversity, exposure and coverage audit (chapter 9)"),
    "ship": ("covlib.cli.ship", "train and archive the models chapters 6 and 7 analyse at their default preset"),
}


def options_module(command: str) -> str:
    """The module that holds a command's options: covlib.cli.arguments.NAME beside its work, covlib.cli.NAME."""
    return COMMANDS[command][0].replace("covlib.cli.", "covlib.cli.arguments.", 1)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="covlib", description="The Coverage Principle book's library.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            importlib.import_module(options_module(name)).add_arguments(p)
    return parser


# a library parameter some commands set under another name: the number of tokens is --num-tokens to `covlib
# generate`, --N (a list of sizes) to predict and scaling
SAME_PARAMETER = {"num_tokens": ("num_tokens", "N")}

# commands whose numpy work is element-wise on one thread: the BLAS thread pool numpy starts as it loads costs them
# about 0.05 s of a 0.5 s process and saves nothing (benchmarks/bench_coverage.py prints both)
ONE_BLAS_THREAD = {"coverage", "generate"}


def option_of(parser: argparse.ArgumentParser, command: str, dest: str) -> str | None:
    """The option of ``command`` that sets the parameter ``dest`` (``n_train`` -> ``--n-train``), or None."""
    for action in parser._actions:  # argparse keeps its subcommands here, and no public way to reach them
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            for name in SAME_PARAMETER.get(dest, (dest,)):
                for option in action.choices[command]._actions:
                    if option.dest == name and option.option_strings:
                        return max(option.option_strings, key=lambda o: (len(o), o))
    return None


def command_line_message(exc: CovlibError, parser: argparse.ArgumentParser, command: str) -> str:
    """A library error as the command line prints it: the parameter its fix changes is named by its option too
    (the library names the parameter only: inside a notebook there is no option to set)."""
    option = option_of(parser, command, exc.parameter) if getattr(exc, "parameter", None) else None
    return f"{exc} (option {option})" if option else str(exc)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing in the book needs a network
    argv = sys.argv[1:] if argv is None else argv
    command = next((a for a in argv if not a.startswith("-")), None)
    if command in ONE_BLAS_THREAD and "numpy" not in sys.modules:  # a process of its own, numpy not yet loaded
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    parser = build_parser(command if command in COMMANDS else None)
    args = parser.parse_args(argv)
    try:
        return int(importlib.import_module(COMMANDS[args.command][0]).run(args) or 0)
    except CovlibError as exc:
        print(f"covlib {args.command}: error: {command_line_message(exc, parser, args.command)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and closed early
        return 0
    except KeyboardInterrupt:
        print(f"covlib {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
