"""The `covlib` command line: one module per subcommand (covlib.cli.main dispatches)."""
from covlib.cli.main import main

__all__ = ["main"]
