"""data/QUEUE.sh, the long experiment queue: it parses, and its two lanes never search the same cell (two
searches of one cell at once would train the same probe folder twice and race on its rows)."""
from __future__ import annotations

import re
import shlex
import subprocess

from covlib.base.paths import REPO

QUEUE = REPO / "data" / "QUEUE.sh"
DEFAULT_MODEL = "L4-d128"  # what "${SEARCH[@]}" passes


def lanes(text: str) -> dict[str, str]:
    """The script split into lane B's block (`if [ "$LANE" = b ]; then ... fi`) and the main lane (the rest)."""
    start = text.index('if [ "$LANE" = b ]; then')
    end = text.index("\nfi\n", start)
    return {"b": text[start:end], "main": text[:start] + text[end:]}


def searched_cells(block: str) -> set[tuple]:
    """(task, cot, N, seed, model) of every `covlib scaling search` line of a block (continuations joined)."""
    cells = set()
    joined = re.sub(r"\\\n\s*", " ", block)
    for line in joined.splitlines():
        code = line.split("#", 1)[0]
        if "scaling search" not in code:
            continue
        words = shlex.split(code[code.index("scaling search") + len("scaling search"):].replace('"${SEARCH[@]}"', ""))
        args, key = {}, None
        for word in words:
            if word.startswith("--"):
                key = word[2:]
                args.setdefault(key, [])
            elif key is not None:
                args[key].append(word)
        model = args.get("model", [DEFAULT_MODEL])[0]
        for N in args["N"]:
            for seed in args["seeds"]:
                cells.add((args["task"][0], "cot" in args, int(N), int(seed), model))
    return cells


def test_the_queue_parses():
    assert subprocess.run(["bash", "-n", str(QUEUE)], capture_output=True).returncode == 0


def test_the_two_lanes_never_search_the_same_cell():
    split = lanes(QUEUE.read_text())
    main, lane_b = searched_cells(split["main"]), searched_cells(split["b"])
    assert ("fivehop", False, 6, 0, DEFAULT_MODEL) in lane_b and ("twohop", False, 25, 0, "mamba-L4-d128") in lane_b
    assert ("threehop", False, 20, 1, DEFAULT_MODEL) in main and ("twohop", True, 50, 1, DEFAULT_MODEL) in main
    assert not main & lane_b, f"cells searched by both lanes: {sorted(main & lane_b)}"


def test_the_cell_reader_sees_a_shared_cell():
    script = ('if [ "$LANE" = b ]; then\n  covlib scaling search --task nontree --N 40 --seeds 0 "${SEARCH[@]}"\nfi\n'
              'step x; covlib scaling search --task nontree --N 30 40 --seeds 0 --step-cap 12000 "${SEARCH[@]}"\n')
    split = lanes(script)
    assert searched_cells(split["main"]) & searched_cells(split["b"]) == {("nontree", False, 40, 0, DEFAULT_MODEL)}
