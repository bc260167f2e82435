"""Every `covlib` command's options load apart from its work (covlib.cli.arguments): `--help` answers without torch,
pandas or scipy."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from covlib.base.errors import CovlibError
from covlib.base.presets import PRESETS
from covlib.cli.main import COMMANDS, main, options_module

HEAVY = ("torch", "pandas", "scipy", "statsmodels", "altair", "papermill", "transformer_lens")


def modules_loaded_by(code: str) -> list[str]:
    """The heavy libraries among sys.modules after a fresh interpreter runs ``code``."""
    probe = f"import sys\n{code}\nimport json\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_no_command_s_options_load_a_heavy_library():
    imports = "\n".join(f"import {options_module(name)}" for name in COMMANDS)
    assert modules_loaded_by(imports) == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_s_help_loads_no_heavy_library(command):
    """The whole path a reader takes: the command line's parser, built for the command, printing its help."""
    code = ("import contextlib, io\nfrom covlib.cli.main import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main([{command!r}, '--help'])\n"
            "    except SystemExit:\n        pass")
    assert modules_loaded_by(code) == []


def test_the_check_sees_a_heavy_import():
    assert modules_loaded_by("import pandas") == ["pandas"]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_prints_its_help(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    assert f"usage: covlib {command}" in capsys.readouterr().out


def test_a_command_s_options_live_in_one_place():
    """Each command's work module runs it and defines no options of its own; its options module defines them."""
    import importlib

    for name, (module, _) in COMMANDS.items():
        work, options = importlib.import_module(module), importlib.import_module(options_module(name))
        assert callable(work.run) and not hasattr(work, "add_arguments"), module
        assert callable(options.add_arguments), options.__name__


def test_an_unknown_diversity_plan_is_named_with_the_known_ones(capsys):
    assert main(["diversity", "status", "--plan", "k4", "--table", "nowhere.csv"]) == 2
    err = capsys.readouterr().err
    assert "--plan k4: unknown plan; choose one of: book, smoke, k3" in err


def test_the_training_presets_are_the_book_s():
    from covlib.training.config import TRAIN_PRESETS
    from covlib.training.model import MODEL_PRESETS

    assert tuple(TRAIN_PRESETS) == tuple(MODEL_PRESETS) == PRESETS


def test_an_unknown_preset_names_the_three():
    from covlib.training.config import make_config

    with pytest.raises(CovlibError, match="choose one of: smoke, default, paper"):
        make_config("laptop")
