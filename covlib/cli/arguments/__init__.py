"""The options of every `covlib` command, one module per command, apart from its work: argparse builds a command's
parser from these alone, so `covlib COMMAND --help` answers at once, without loading torch, pandas or scipy
(tests/test_cli_arguments.py holds them to that)."""
