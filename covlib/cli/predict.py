"""`covlib predict`: the training data a task will need, by the book's fitted rule, before any training."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from covlib.base.errors import CovlibError
from covlib.base.files import write_text_atomic
from covlib.base.paths import RULE_FILE, repository_path
from covlib.cli.task_option import task_of
from covlib.coverage.predict import predict_requirement, predict_with_rule
from covlib.coverage.rule import Rule, load_rule

RAW_ONLY = ("k", "share", "factor", "evidence")  # options that set the bare crossing, read with --raw only


def rule_header(rule: Rule, task: str, cot: bool) -> list[str]:
    """The rule and its out-of-sample accuracy, as the command prints them above its answer."""
    provenance, accuracy = rule.provenance, rule.accuracy
    lines = [f"{task}{' (chain of thought)' if cot else ''}: the book's rule, fitted on {rule.cells} cells of "
             f"{len(rule.fitted_on)} tasks under {provenance.get('protocol', 'an unknown protocol')}"
             + (f"; fitted at commit {provenance['commit']}" if provenance.get("commit") else ""),
             f"  n_req = {rule.describe(task, cot)}"]
    if accuracy.get("cells"):
        lines.append(f"  out of sample (each task predicted by the rule fitted without it): "
                     f"{accuracy['within_125']:.0%} of {accuracy['cells']} cells within 1.25x, "
                     f"{accuracy['within_115']:.0%} within 1.15x; median measured / predicted per task "
                     + ", ".join(f"{name} {ratio:.2f}" for name, ratio in accuracy.get("median_ratio", {}).items()))
    return lines


def run(args: argparse.Namespace) -> int:
    task = task_of(args)
    if args.seeds < 1 or args.test_size < 1 or args.jobs < 1:
        raise CovlibError("--seeds, --test-size and --jobs must be at least 1")
    given = [f"--{name}" for name in RAW_ONLY if getattr(args, name) is not None]
    if given and not args.raw:
        raise CovlibError(f"{', '.join(given)} set the bare crossing: add --raw (without it the book's rule decides "
                          "the evidence, its level and share, and the factor)")
    if args.raw and (args.rule or args.cot):
        raise CovlibError("--raw takes no --rule or --cot: give the evidence with --evidence (hop facts for chain of "
                          "thought) and its level with --k")
    start = time.perf_counter()
    seeds = list(range(args.seeds))
    if args.raw:
        k, share = args.k if args.k is not None else 3, args.share if args.share is not None else 0.99
        factor, evidence = args.factor if args.factor is not None else 1.0, args.evidence or "contexts"
        if k < 1 or not 0 < share <= 1 or factor <= 0:
            raise CovlibError("--k must be at least 1, --share in (0, 1], --factor positive")
        table = predict_requirement(task, args.N, k, share, seeds, factor, args.rel_tol, args.test_size,
                                    jobs=args.jobs, evidence=evidence)
        print(f"{task}: training examples at which {share:.0%} of the ID test items have evidence {k} ({evidence})"
              + (f", times {factor:g}" if factor != 1 else "") + f" (median and range over {args.seeds} seeds)")
    else:
        rule = load_rule(args.rule or repository_path(RULE_FILE))
        table = predict_with_rule(task, args.N, rule, args.cot, seeds, args.rel_tol, args.test_size, jobs=args.jobs)
        print("\n".join(rule_header(rule, task, args.cot)))
        print(f"(median and range over {args.seeds} dataset seeds)")
    print(f"{'N':>6}{'predicted':>12}{'range':>22}{'ID pool':>12}{'seconds':>10}")
    for _, r in table.iterrows():
        if r["n_pred"] != r["n_pred"]:
            print(f"{r['N']:>6}{'not reached below the ID pool in every seed':>44}{r['eligible']:>12,}{r['seconds']:>10.1f}")
            continue
        print(f"{r['N']:>6}{r['n_pred']:>12,.0f}{f'{r.n_low:,.0f}-{r.n_high:,.0f}':>22}{r['eligible']:>12,}"
              f"{r['seconds']:>10.1f}")
    print(f"total {time.perf_counter() - start:.1f} s")
    if args.out:
        old = pd.read_csv(args.out) if Path(args.out).is_file() else table.iloc[:0]
        keep = [c for c in ("task", "N", "k", "share", "seeds", "evidence", "cot") if c in old and c in table]
        old = old.merge(table[keep], on=keep, how="left", indicator=True)
        old = old[old["_merge"] == "left_only"].drop(columns="_merge")
        both = pd.concat([old, table], ignore_index=True).sort_values(["task", "k", "share", "N"])
        write_text_atomic(args.out, both.to_csv(index=False, float_format="%.6g"))
    return 0
