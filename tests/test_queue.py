"""data/QUEUE.sh, the long experiment queue: it parses, every covlib command in it is one covlib's own parser
accepts (a typo would surface hours into the queue), and its floor reruns name the floor the book reads."""
from __future__ import annotations

import re
import shlex
import subprocess

import pytest

from covlib.base.paths import REPO
from covlib.cli.main import build_parser

QUEUE = REPO / "data" / "QUEUE.sh"


def covlib_commands(text: str) -> list[list[str]]:
    """The arguments of every `covlib ...` line of the script, with its arrays and variables expanded from the
    script's own assignments (continuations joined, comments dropped)."""
    arrays = {name: shlex.split(body) for name, body in re.findall(r"^\s*(\w+)=\((.*)\)$", text, flags=re.M)}
    scalars = dict(re.findall(r"^\s*(\w+)=([^(\s][^\s]*)$", text, flags=re.M))
    commands = []
    for line in re.sub(r"\\\n\s*", " ", text).splitlines():
        code = line.split("#", 1)[0]
        match = re.search(r"(?:^|;\s*)covlib (.+)$", code.strip())
        if not match:
            continue
        words = []
        for word in shlex.split(match.group(1)):
            array = re.fullmatch(r"\$\{(\w+)\[@\]\}", word)
            words.extend(arrays[array.group(1)] if array else [word])
        resolved = [re.sub(r"\$\{?(\w+)\}?", lambda m: scalars.get(m.group(1), "X"), w) for w in words]
        commands.append([w.strip('"') for w in resolved if w != "&"])  # a trailing & runs it in the background
    return commands


def test_the_queue_parses():
    assert subprocess.run(["bash", "-n", str(QUEUE)], capture_output=True).returncode == 0


def test_every_covlib_command_of_the_queue_is_accepted_by_covlibs_parser():
    commands = covlib_commands(QUEUE.read_text())
    assert any(c[:2] == ["scaling", "recheck"] for c in commands)
    for command in commands:
        build_parser(command[0]).parse_args(command)  # SystemExit (a failed test) on an unknown option or value


def test_the_reader_sees_a_typo():
    with pytest.raises(SystemExit):
        for command in covlib_commands('X=(--jobs 2)\nstep a; covlib scaling recheck --give-up-flor 2000 "${X[@]}"\n'):
            build_parser(command[0]).parse_args(command)


def test_the_queue_reruns_under_the_floor_the_book_reads():
    from covlib.search.recheck import BOOK_FLOOR

    assert re.search(rf"^FLOOR={BOOK_FLOOR}$", QUEUE.read_text(), flags=re.M)


def test_the_longer_floors_control_runs_under_the_floor_chapter_4_reads():
    from covlib.search.longer_floor import LONGER_FLOOR

    rechecks = [c for c in covlib_commands(QUEUE.read_text()) if "--from-floor" in c]
    assert rechecks and all(c[c.index("--give-up-floor") + 1] == str(LONGER_FLOOR) for c in rechecks)
    assert all(c[c.index("--from-floor") + 1] == "2000" for c in rechecks)


def first_words(text: str) -> list[tuple[int, str]]:
    """(line number, first word) of every line of the script that is code (continuations joined, comments and
    blank lines dropped)."""
    out = []
    for number, line in enumerate(re.sub(r"\\\n\s*", " ", text).splitlines(), start=1):
        code = line.strip()
        if code and not code.startswith("#"):
            out.append((number, code.split()[0]))
    return out


def strays(text: str) -> list[str]:
    """Code lines that start with neither an assignment, a function the script defines, a shell keyword or
    builtin, nor a command the queue uses: a comment's continuation that lost its `#` would run as a command."""
    functions = set(re.findall(r"^\s*(\w+)\(\)", text, flags=re.M))
    known = {"if", "then", "else", "elif", "fi", "for", "do", "done", "while", "case", "esac", "[", "[[", "}", "{",
             "set", "export", "exit", "wait", "echo", "cd", "cp", "mkdir", "git", "kill", "bash", "nohup", "covlib", "tail",
             "trap",
             '"$PY"'}
    return [f"line {n}: {word}" for n, word in first_words(text)
            if not (re.match(r"^\w+=", word) or word.rstrip("()") in functions | known or word.startswith("(")
                    or word.startswith("$("))]


def test_every_line_of_the_queue_is_a_comment_or_a_command_it_knows():
    assert strays(QUEUE.read_text()) == []
    # a wrapped comment whose second line lost its `#`: bash -n accepts it, and it would run as a command
    assert strays("step() { :; }\n# 16. every bracket, at\n      6a1711b, after step 13\nstep tighten; covlib scaling tighten\n") == [
        "line 3: 6a1711b,"]


def queue_in(repo, *args: str) -> subprocess.CompletedProcess:
    """data/QUEUE.sh run with ``args`` from the root of the git repository ``repo`` (a copy of the script)."""
    return subprocess.run(["bash", "data/QUEUE.sh", *args], cwd=repo, capture_output=True, text=True)


@pytest.fixture
def scratch_repo(tmp_path):
    """A git repository holding the queue script, a README and a probe table, all committed; its parent (the
    queue's base for logs and worktrees) is the test's own folder."""
    repo = tmp_path / "repo"
    (repo / "data" / "scaling").mkdir(parents=True)
    (repo / "data" / "QUEUE.sh").write_text(QUEUE.read_text())
    (repo / "README.md").write_text("# a book\n")
    (repo / "data" / "scaling" / "probes.csv").write_text("task,N\n")
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"]):
        subprocess.run(["git", *command], cwd=repo, check=True)
    return repo


def test_a_snapshot_needs_a_reason(scratch_repo):
    done = queue_in(scratch_repo, "snapshot")
    assert done.returncode == 2 and "give the reason its commits record" in done.stderr


def test_a_snapshot_refuses_to_overwrite_a_readme_being_edited(scratch_repo):
    (scratch_repo / "README.md").write_text("# a book, being edited\n")
    (scratch_repo / "data" / "scaling" / "probes.csv").write_text("task,N\ntwohop,30\n")
    done = queue_in(scratch_repo, "snapshot", "new rows")
    assert done.returncode == 1 and "README.md, tests/snapshots or papers_figures has uncommitted changes" in done.stderr
    log = subprocess.run(["git", "log", "--oneline"], cwd=scratch_repo, capture_output=True, text=True).stdout
    assert len(log.splitlines()) == 1  # nothing committed: the rows wait with the README


def test_a_snapshot_needs_the_venv_before_it_pauses_or_commits_anything(scratch_repo):
    (scratch_repo / "data" / "scaling" / "probes.csv").write_text("task,N\ntwohop,30\n")
    done = queue_in(scratch_repo, "snapshot", "new rows")
    assert done.returncode == 1 and "run make setup first" in done.stderr
    log = subprocess.run(["git", "log", "--oneline"], cwd=scratch_repo, capture_output=True, text=True).stdout
    assert len(log.splitlines()) == 1


FAKE_BOOK = """#!/usr/bin/env bash
# stands in for `python -m covlib.cli book --snapshot ...`: redraws the README, draws one figure for the first time
echo "# a book, rewritten from the new rows" > README.md
mkdir -p papers_figures && echo png > papers_figures/04_new_figure.png
"""


def test_a_snapshot_commits_the_rows_then_every_file_the_book_rewrote_or_drew_anew(scratch_repo):
    python = scratch_repo / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_BOOK)
    python.chmod(0o755)
    (scratch_repo / ".gitignore").write_text(".venv/\n")
    for command in (["add", ".gitignore"], ["config", "user.name", "t"], ["config", "user.email", "t@t"],
                    ["commit", "-q", "-m", "ignore the venv"]):
        subprocess.run(["git", *command], cwd=scratch_repo, check=True)
    (scratch_repo / "data" / "scaling" / "probes.csv").write_text("task,N\ntwohop,30\n")

    done = queue_in(scratch_repo, "snapshot", "new rows")
    assert done.returncode == 0, done.stderr
    def commit(ref: str) -> list[str]:  # its subject, then the files it changed
        shown = ["git", "show", "--format=%s", "--name-only", ref]
        return subprocess.run(shown, cwd=scratch_repo, capture_output=True, text=True).stdout.split()

    snapshot, rows = commit("HEAD"), commit("HEAD~1")
    assert " ".join(snapshot).startswith("Snapshot (the default book from") and snapshot[-2:] == [
        "README.md", "papers_figures/04_new_figure.png"]
    assert " ".join(rows) == "Rows the queue wrote: new rows data/scaling/probes.csv"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=scratch_repo, capture_output=True, text=True)
    assert status.stdout == ""  # the checkout holds what the book wrote, and nothing is left behind
