"""The three presets every chapter and every training run takes, by name (their settings live with what they set)."""
from __future__ import annotations

# smoke: seconds, for tests; default: the book on a laptop CPU; paper: the authors' scale, on a GPU
PRESETS = ("smoke", "default", "paper")
