"""The one error type covlib raises for bad input: its message names the problem and the fix."""
from __future__ import annotations


class CovlibError(ValueError):
    """Bad input or an impossible request; the command line prints the message and exits 2.

    ``parameter`` names the parameter the fix changes (``n_train``), as a notebook or a Python caller knows it: the
    message names it so, and the command line adds its option (``--n-train``) when it has one."""

    def __init__(self, message: str = "", *, parameter: str | None = None) -> None:
        super().__init__(message)
        self.parameter = parameter
