# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# A tiny notebook the sweep tests run: it fails unless `x` is an int, writes a file into
# `figures_dir`, records one metric, and can sleep first (`sleep_s`, for cancellation tests).

# %% tags=["parameters"]
x: int | str = 1  # declared to take a str too, so that a failure inside the notebook can be tested
figures_dir = ""
sleep_s = 0

# %%
# ruff: noqa: E402
import time
from pathlib import Path

from covlib.book.sweep import record_metrics

time.sleep(sleep_s)

if not isinstance(x, int):
    raise ValueError(f"x must be an int, got {x!r}")
if figures_dir:
    Path(figures_dir).mkdir(parents=True, exist_ok=True)
    (Path(figures_dir) / "probe.txt").write_text(str(x))
record_metrics({"y": 2 * x, "x_squared": x * x})
