"""The authors' on-disk format: reading their folders, byte-exact round trips, bad folders, the CLI."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from covlib.base.errors import CovlibError
from covlib.cli.main import main as cli_main
from covlib.tasks.datasets import DatasetConfig, generate, save_dataset
from covlib.tasks.folders import dumps_items, folder_files, load_dataset

AUTHORS = Path(__file__).parent / "fixtures" / "authors"
AUTHORS_FOLDERS = sorted(p for p in AUTHORS.iterdir() if p.is_dir())


def test_dumps_items_matches_json_dumps():
    items = [{"input_text": "<t_1><t_2>", "target_text": "<t_1><t_2><t_3></a>", "type": "type_0"}] * 3
    assert dumps_items(items) == json.dumps(items, indent=2)
    assert dumps_items([]) == json.dumps([], indent=2)


@pytest.mark.parametrize("folder", AUTHORS_FOLDERS, ids=lambda p: p.name)
def test_authors_folders_load_and_round_trip_byte_for_byte(folder):
    loaded = load_dataset(folder)
    assert loaded.num_tokens == 10 and loaded.n_inputs == 3 and len(loaded.train) == 300
    assert loaded.test_types == ["train_inferred", "type_0", "type_1", "type_2", "type_3"]
    assert loaded.meta is None
    for name, text in folder_files(loaded).items():
        assert text == (folder / name).read_text(encoding="utf-8"), name


@pytest.mark.parametrize("folder", AUTHORS_FOLDERS, ids=lambda p: p.name)
def test_authors_targets_agree_with_their_atomic_facts(folder):
    loaded = load_dataset(folder)
    facts = loaded.atomic_facts()
    f1 = dict(zip(map(tuple, facts["f1"].inputs.tolist()), facts["f1"].answers.tolist()))
    f2 = dict(zip(map(tuple, facts["f2"].inputs.tolist()), facts["f2"].answers.tolist()))
    for x, tgt in zip(loaded.test.inputs.tolist(), loaded.test.targets.tolist()):
        b = f1[x[0], x[1]]
        assert tgt[-1] == f2[b, x[2]]
        if folder.name.endswith(".cot"):
            assert tgt[0] == b


def test_covlib_folders_round_trip(tmp_path):
    ds = generate(DatasetConfig("threehop", 6, 300, cot=True, test_size_per_type=20))
    folder = save_dataset(ds, tmp_path)
    loaded = load_dataset(folder)
    assert np.array_equal(loaded.train.inputs, ds.train_inputs)
    assert np.array_equal(loaded.test.inputs, ds.test_inputs)
    assert loaded.test.types.tolist() == ds.test_types.tolist()
    assert loaded.meta["config"] == ds.config.to_dict()
    for name, text in folder_files(loaded).items():
        assert text == (folder / name).read_text(encoding="utf-8")


def _broken_copy(tmp_path: Path, edit) -> Path:
    folder = tmp_path / "broken"
    shutil.copytree(AUTHORS / "twohop.10.300.diff-f12.inf", folder)
    edit(folder)
    return folder


def _edit_json(file: Path, change) -> None:
    data = json.loads(file.read_text())
    change(data)
    file.write_text(json.dumps(data))


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda f: (f / "train.json").unlink(), "lacks train.json"),
        (lambda f: (f / "test.json").write_text("[{"), "not valid JSON"),
        (lambda f: (f / "vocab.json").write_text('{"a": 1}'), "list of distinct token strings"),
        (lambda f: _edit_json(f / "train.json", lambda d: d[0].update(target_text=d[0]["input_text"])), "then at least one token"),
        (lambda f: _edit_json(f / "train.json", lambda d: d[0].update(input_text="<t_99><t_1><t_2>",
                                                                      target_text="<t_99><t_1><t_2><t_3></a>")),
         "does not list"),
        (lambda f: _edit_json(f / "test.json", lambda d: [it.pop("type") for it in d]), "no string 'type'"),
        (lambda f: _edit_json(f / "test.json", lambda d: d.append(
            {"input_text": d[0]["input_text"], "target_text": d[0]["input_text"] + ("<t_1></a>" if
             d[0]["target_text"].endswith("<t_0></a>") else "<t_0></a>"), "type": d[0]["type"]})),
         "inconsistent targets"),
        (lambda f: _edit_json(f / "test.json", lambda d: d[0].update(target_text=d[0]["input_text"] + "<t_1><t_1></a>")),
         "different .prompt, target. lengths"),
    ],
    ids=["missing-file", "malformed-json", "bad-vocab", "empty-target", "unknown-token", "no-type", "two-answers",
         "ragged-targets"],
)
def test_bad_folders_get_one_clear_error(tmp_path, edit, message):
    folder = _broken_copy(tmp_path, edit)
    with pytest.raises(CovlibError, match=message):
        load_dataset(folder)


def test_not_a_folder(tmp_path):
    with pytest.raises(CovlibError, match="not a folder"):
        load_dataset(tmp_path / "nowhere")


def test_cli_generate_prints_the_path_last_and_is_idempotent(tmp_path, capsys):
    argv = ["generate", "twohop", "--num-tokens", "10", "--n-train", "200", "--seed", "3",
            "--test-size-per-type", "10", "--cot", "--out", str(tmp_path)]
    assert cli_main(argv) == 0
    path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    assert path == tmp_path / "twohop.10.200.diff-f12.cot.seed-3"
    before = {p.name: p.stat().st_mtime_ns for p in path.iterdir()}
    assert cli_main(argv) == 0  # same config again: reused, not rewritten
    assert {p.name: p.stat().st_mtime_ns for p in path.iterdir()} == before
    assert json.loads((path / "covlib.json").read_text())["command"].startswith("covlib generate twohop")


@pytest.mark.parametrize(
    "args, message",
    [
        (["fourhop", "-N", "10", "--n-train", "5"], "unknown task"),
        (["twohop", "-N", "10", "--n-train", "100000"], "the maximum is 497: lower n_train (option --n-train)"),
        (["twohop", "-N", "1", "--n-train", "5"], "too small"),
    ],
)
def test_cli_bad_input_exits_non_zero_and_writes_nothing(tmp_path, capsys, args, message):
    assert cli_main(["generate", *args, "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_console_script_runs():
    exe = Path(sys.executable).parent / "covlib"
    out = subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=True).stdout
    assert "generate" in out and "coverage" in out


def test_atomic_writes_leave_ordinary_permissions(tmp_path):
    import os

    from covlib.base.files import write_text_atomic

    write_text_atomic(tmp_path / "a.json", "[]")
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]  # no temporary file left behind


def test_a_second_process_that_wants_a_dataset_being_made_waits_for_it_and_reuses_it(tmp_path):
    """Two chapters run side by side (covlib book --jobs 2) may want the same dataset: while one holds the
    folder's lock the other waits, then finds the folder made and does not write it again."""
    from covlib.base.files import folder_lock

    config = DatasetConfig("twohop", 10, 300, test_size_per_type=20)
    wanted = tmp_path / config.folder_name
    script = (f"from covlib.tasks.datasets import DatasetConfig, ensure_dataset; "
              f"print(ensure_dataset(DatasetConfig('twohop', 10, 300, test_size_per_type=20), {str(tmp_path)!r}))")
    with folder_lock(wanted):
        other = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        with pytest.raises(subprocess.TimeoutExpired):
            other.wait(timeout=8)  # long enough to import covlib and make a dataset this small, were it not waiting
        save_dataset(generate(config), tmp_path)  # the lock's holder makes it
        made = (wanted / "covlib.json").stat().st_mtime_ns
    out, _ = other.communicate(timeout=120)
    assert other.returncode == 0 and out.strip() == str(wanted)
    assert (wanted / "covlib.json").stat().st_mtime_ns == made  # reused, not written again


@pytest.mark.parametrize("command, pinned", [("coverage", "1"), ("train", None)])
def test_a_light_command_starts_numpy_with_one_blas_thread(tmp_path, command, pinned):
    """`covlib coverage` and `covlib generate` run as a process of their own pin BLAS to one thread before numpy
    loads (its thread pool only costs them start-up time); a training command, or a call from a process that already
    holds numpy, is left as it is."""
    script = ("import os, sys\nfrom covlib.cli.main import main\nos.environ.pop('OPENBLAS_NUM_THREADS', None)\n"
              f"sys.argv = ['covlib', {command!r}, {str(tmp_path / 'missing')!r}]\n"
              "try:\n    main()\nexcept SystemExit:\n    pass\n"
              "print(os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True).stdout.split()
    assert out[0] == str(pinned)
    script_with_numpy = "import numpy\n" + script
    out = subprocess.run([sys.executable, "-c", script_with_numpy], capture_output=True, text=True).stdout.split()
    assert out[0] == "None"
