"""JupyterLab settings `make setup` adds beside jupytext's default viewer: no pop-up asking to fetch Jupyter's
news and no update check, which would ask a reader of an offline book to reach the network (and cover a chart).
Usage: python -m covlib.book.lab_settings SETTINGS_FILE (a JupyterLab overrides file; other keys are kept)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from covlib.base.files import write_text_atomic

NOTIFICATION = "@jupyterlab/apputils-extension:notification"
QUIET = {"fetchNews": "false", "checkForUpdates": False}


def quiet_news(settings_file: str | Path) -> dict:
    """Add QUIET to the notification plugin's settings in ``settings_file``; return the whole settings."""
    path = Path(settings_file)
    settings = json.loads(path.read_text()) if path.is_file() else {}
    settings[NOTIFICATION] = settings.get(NOTIFICATION, {}) | QUIET
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(settings, indent=2) + "\n")
    return settings


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m covlib.book.lab_settings SETTINGS_FILE")
    quiet_news(sys.argv[1])
