"""`covlib generate`: write a task's dataset folder."""
from __future__ import annotations

import argparse
import time

from covlib.cli.task_option import task_of
from covlib.tasks.datasets import DatasetConfig, ensure_dataset


def run(args: argparse.Namespace) -> int:
    config = DatasetConfig(
        task=task_of(args),
        num_tokens=args.num_tokens,
        n_train=args.n_train,
        seed=args.seed,
        seen_ratio=args.seen_ratio,
        test_size_per_type=args.test_size_per_type,
        cot=args.cot,
        fake_bridge=args.fake_bridge,
        same_functions=args.same_functions,
        include_atomic=args.include_atomic,
        commutative=tuple(args.commutative),
        first_role_items=args.first_role_items,
    )
    start = time.perf_counter()
    folder = ensure_dataset(config, args.out)
    print(f"{config.folder_name}: ready in {time.perf_counter() - start:.2f} s")
    print(folder)
    return 0
