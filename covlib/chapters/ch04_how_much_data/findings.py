"""Chapter 4's findings as a markdown list."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from covlib.analyses.fits import describe_exponent, has_interval
from covlib.base.paper import EXPONENTS, theory_exponent
from covlib.figures.give_up_rule import reader_name
from covlib.figures.text import run_time


def summary_bullets(fit_twohop: dict | None, c3: float, chain_fits: Mapping[str, dict | None],
                    size_note: str, measured_size_count: int, own_probes: int, own_hours: float,
                    threshold: float, verdicts: str = "", claims: str = "") -> str:
    """The chapter's findings as a markdown list: first what it concludes against the paper (``verdicts`` and
    ``claims``, a sentence each; none if empty), then what it measured: the two-hop law, coverage's prediction,
    longer chains, model size (only when two sizes are measured), and the compute it took. The measured exponents
    are set beside the paper's, not judged: only the verdicts' rule judges them."""
    bullets = [b for b in (verdicts, claims) if b]
    with_interval = has_interval(fit_twohop)
    if fit_twohop:
        bullets.append(f"The data a 4-layer transformer needs to reach {threshold:.0%} ID accuracy on two-hop grows as "
                       f"a power of N, n_req ~ N^c with {describe_exponent(fit_twohop)}, measured by training on a "
                       f"CPU under the authors' give-up rule (the paper's c: {EXPONENTS['twohop']:.2f}).")
    if not np.isnan(c3) and with_interval:
        bullets.append(f"Coverage predicts the growth without training a model: the data that 3-covers 99% of the ID "
                       f"items grows as N^{c3:.2f}, {abs(c3 - fit_twohop['c']):.2f} "
                       f"{'above' if c3 >= fit_twohop['c'] else 'below'} the measured {fit_twohop['c']:.2f} "
                       f"(95% interval {fit_twohop['c_low']:.2f} to {fit_twohop['c_high']:.2f}); the theory gives "
                       f"{theory_exponent(2):.2f} (k = 2) and {theory_exponent(3):.2f} (k = 3).")
    measured_chains = [n for n in ("threehop", "parallel_twohop") if chain_fits.get(n)]
    if measured_chains:
        bullets.append("Longer chains at small N, under the authors' rule: " + "; ".join(
            f"{reader_name(n)} {describe_exponent(chain_fits[n])}, paper {EXPONENTS[n]:.2f}" for n in measured_chains) + ".")
    bullets.append(size_note if measured_size_count > 1 else
                   "Model size: not measured yet at this cache (section 4.3 names the commands), so no claim is made.")
    bullets.append(f"Compute: this chapter's searches took {own_probes} probes, {run_time(own_hours)}, on this "
                   "machine (one-thread runs, two or more at a time on two cores; the wall time of each run, summed).")
    return "\n".join(f"* {b}" for b in bullets)
