"""The one error type covlib raises for bad input: its message names the problem and the fix."""


class CovlibError(ValueError):
    """Bad input or an impossible request; the command line prints the message and exits 2."""
