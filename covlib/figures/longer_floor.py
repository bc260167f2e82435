"""What a reader sees of the longer floor's control (covlib.search.longer_floor): while the queue runs it, how far
it has come and the command; once every cell is finished under both floors, the n_req ratio, the tilt of the fit
with its interval, and what the two say about the patience note's inference."""
from __future__ import annotations

from covlib.analyses.fits import exponent_metrics, has_interval
from covlib.figures.text import count_of


def longer_floor_command(task: str, model: str, base_floor: int, longer_floor: int,
                         table: str = "data/scaling/probes.csv") -> str:
    """The shell command that runs (or resumes) the control's reruns: the queue's step of the same name."""
    return (f"covlib scaling recheck --task {task} --model {model} --from-floor {base_floor} "
            f"--give-up-floor {longer_floor} --table {table} --run")


def longer_floor_note(test: dict, name: str, base_floor: int, longer_floor: int, command: str) -> str:
    """The control in words (``test`` from longer_floor_test; ``name`` the series as readers name it)."""
    head = (f"**Would more patience tilt the fit?** The {name} lower ends that {base_floor:,} steps past the fit "
            f"gave up on are rerun under a floor of {longer_floor:,} steps")
    counts = (f"{test['reruns']} of the {test['reopened']} it reopens rerun so far, {test['flips']} flipped to "
              "success")
    if test["pending"] or not test["pairs"]:
        return (f"{head} (`{command}`, the book's queue runs it last): {counts}. The comparison appears here once all "
                f"{test['cells']} cells are finished under both floors ({test['pending']} still searching).")
    tilt, base, longer = test["tilt"], test["base_fit"], test["longer_fit"]
    spread = (f"{test['ratio_min']:.2f} to {test['ratio_max']:.2f}" if test["pairs"] > 1 else "one cell")
    text = (f"{head}: {counts}. Over the {count_of(test['pairs'], 'cell')} bracketed under both floors, n_req under "
            f"{longer_floor:,} steps is {test['ratio']:.2f} times that under {base_floor:,} (geometric mean; {spread})")
    if tilt is None:
        return text + ": too few values of N to measure a tilt."
    shift = f"the exponent moves by {tilt['c']:+.2f}"
    exponents = (f"{longer['c']:.2f} under {longer_floor:,} steps against {base['c']:.2f} under {base_floor:,} on the "
                 "same cells")
    if not has_interval(tilt):
        return (text + f", and {shift} ({exponents}; no interval from {tilt['n_values']} values of N, so no "
                "verdict on the tilt).")
    text += (f", and {shift} (95% interval {tilt['c_low']:+.2f} to {tilt['c_high']:+.2f}, the exponent of the "
             f"ratio itself, paired by cell; {exponents}). ")
    if tilt["c_low"] <= 0 <= tilt["c_high"]:
        lowered = "lowers n_req" if test["ratio"] < 1 else "leaves n_req where it was"
        return text + (f"The interval holds 0: the longer floor {lowered} without a tilt these cells can detect, as "
                       "the learning curves suggested, so the exponent under the shorter floor stands.")
    way = "steepens" if tilt["c_low"] > 0 else "flattens"
    return text + (f"The interval excludes 0: more patience {way} the fit, so the {base_floor:,}-step floor still "
                   "decides part of the exponent, against the learning curves' suggestion.")


def longer_floor_metrics(test: dict, name: str, longer_floor: int) -> dict[str, float]:
    """The control as recorded metrics (NaN, and 0 counts, while cells are still searching)."""
    tilt = test["tilt"]
    return {
        "longer_floor_steps": longer_floor,
        f"longer_floor_reopened_{name}": test["reopened"], f"longer_floor_reruns_{name}": test["reruns"],
        f"longer_floor_flips_{name}": test["flips"], f"longer_floor_pending_{name}": test["pending"],
        f"longer_floor_nreq_ratio_{name}": test["ratio"], f"longer_floor_pairs_{name}": test["pairs"],
        f"longer_floor_tilt_{name}": tilt["c"] if tilt else float("nan"),
        f"longer_floor_tilt_{name}_ci_low": tilt["c_low"] if has_interval(tilt) else float("nan"),
        f"longer_floor_tilt_{name}_ci_high": tilt["c_high"] if has_interval(tilt) else float("nan"),
        **exponent_metrics(f"{name}_longer_floor", test["longer_fit"]),
    }

