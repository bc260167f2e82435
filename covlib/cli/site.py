"""`covlib site`: build the static site."""
from __future__ import annotations

import argparse
import time

from covlib.book.site import build_site


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    site = build_site(args.preset, args.build_dir, edition=args.edition)
    pages = sorted(p.name for p in site.glob("*.html"))
    megabytes = sum(f.stat().st_size for f in site.rglob("*") if f.is_file()) / 1e6
    print(f"site: {site / 'index.html'} ({len(pages)} pages, {megabytes:.0f} MB with downloads/, "
          f"{time.perf_counter() - t0:.1f} s); serve it with `python -m http.server -d {site}`")
    return 0
