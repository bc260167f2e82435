"""The machine a benchmark ran on, in one line: CPU model, family/model, the vector and matrix flags that
decide fp32/bf16 speed, cores, and the load average (other processes share this machine)."""
from __future__ import annotations

import os
from pathlib import Path

FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")


def cpu_info() -> dict[str, str]:
    """The first processor's fields from /proc/cpuinfo (empty off Linux)."""
    info: dict[str, str] = {}
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return info
    for line in text.split("\n\n")[0].splitlines():
        key, _, value = line.partition(":")
        info[key.strip()] = value.strip()
    return info


def describe() -> str:
    """'AMD EPYC (family 25 model 1), 2 cores, flags: avx2 fma; no avx512f avx512_bf16 amx_bf16 amx_tile'."""
    info = cpu_info()
    flags = set(info.get("flags", "").split())
    have = [f for f in FLAGS if f in flags]
    lack = [f for f in FLAGS if f not in flags]
    return (f"{info.get('model name', 'unknown CPU')} (family {info.get('cpu family', '?')} model "
            f"{info.get('model', '?')}), {os.cpu_count()} cores, flags: {' '.join(have) or 'none'}"
            + (f"; no {' '.join(lack)}" if lack else ""))


def load() -> str:
    return f"load average {os.getloadavg()[0]:.2f}"
