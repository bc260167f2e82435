"""The text check over built pages (covlib.book.pagecheck): each check fails on a planted case and passes on
the same page without it. tests/test_site.py runs it over every page of the smoke site. The repository check reads
the repository's own tracked text: planted cases below are split in two ("issue " "19") so that this file holds none."""
from __future__ import annotations

import subprocess

import pytest

from covlib.book.pagecheck import (
    describe,
    page_findings,
    repository_findings,
    repository_text_findings,
    site_findings,
    tracked_text_files,
)

PAGE = """<html><head><script>var x = "/work/main/build"; // scripts are not text</script>
<style>.a {{ content: "$x$" }}</style></head><body>
<h1>Coverage</h1><p>Accuracy rises with the k-cutoff, as in the paper's section 2. The fit costs $5 and
<span class="math notranslate nohighlight">\\(x_2\\)</span> is typeset.</p>
<div class="cell docutils container"><div class="cell_input docutils container"><pre>cfg = ModelConfig(n_layers=4)
text = f"patching $x_2$ flips"</pre></div>
<div class="cell_output docutils container"><pre>{planted}</pre></div></div></body></html>"""

PLANTED = {
    "machine path": "wrote /work/main/build/default/02_coverage.ipynb",
    "machine path ": "Path('C:\\\\Users\\\\me\\\\book')",
    "Python repr": "PosixPath('build/datasets')",
    "Python repr ": "ModelConfig(n_layers=4, d_model=128)",
    "Python repr  ": "ProbeRules(threshold=0.99, patience=100)",
    "Python repr   ": "&lt;covlib.tasks.datasets.Dataset object at 0x7f3a2c&gt;",
    "Python repr    ": "{'n_req_twohop': 27000, 'exponent': 2.11}",
    "raw $...$ (math not typeset)": "patching $x_2$ flips 98% of predictions",
    "raw $...$ (math not typeset) ": "grouped by $(b, x_2)$",
    "issue number": "measured for issue " "19",
    "issue number ": "see issues " "#20",
    "reference to the spec": "as SP" "EC §2 defines",
    "maintainers' note": "lane B of data/QUEUE.sh",
    "maintainers' note ": "MALLOC_ARENA_MAX=2",
}


def test_a_clean_page_passes():
    assert page_findings(PAGE.format(planted="98% of predictions flip")) == []


@pytest.mark.parametrize("check", sorted(PLANTED))
def test_each_check_fails_on_a_planted_case(check):
    findings = page_findings(PAGE.format(planted=PLANTED[check]))
    assert {f.check for f in findings} == {check.strip()}, findings


def test_typeset_math_scripts_and_code_inputs_are_not_prose():
    # the same $x_2$ and ModelConfig(...) inside a cell's folded code are code, not a reader's text
    assert page_findings(PAGE.format(planted="")) == []
    # but a path or a note is wrong even in folded code
    html = PAGE.replace("cfg = ModelConfig", "cfg = load('/home/me/run') or ModelConfig")
    assert [f.check for f in page_findings(html.format(planted=""))] == ["machine path"]


def test_tex_in_a_container_mathjax_typesets_is_not_raw():
    assert page_findings(PAGE.format(planted='<span class="mathjax_process">patching $x_2$ flips</span>')) == []
    assert page_findings(PAGE.format(planted='<span class="note">patching $x_2$ flips</span>')) != []
    # MyST marks every section "tex2jax_ignore mathjax_ignore": TeX there is left raw, so it is a finding
    ignored = PAGE.replace("<body>", '<body><section class="tex2jax_ignore mathjax_ignore">').replace(
        "</body>", "</section></body>")
    assert [f.check for f in page_findings(ignored.format(planted="grouped by $(b, x_2)$"))] == [
        "raw $...$ (math not typeset)"]


def test_site_findings_names_the_page(tmp_path):
    (tmp_path / "ok.html").write_text(PAGE.format(planted="fine"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bad.html").write_text(PAGE.format(planted="see SP" "EC §1"))
    found = site_findings(tmp_path)
    assert list(found) == ["sub/bad.html"] and found["sub/bad.html"][0].check == "reference to the spec"


# the repository's own text: (planted text, the check it trips); each split in two, as above
REPOSITORY_PLANTED = [
    ("# N = 70 (issue " "31): the authors' second point", "work-item reference"),
    ("see Issues #" "53 for the plan", "work-item reference"),
    ("fixed in PR #" "7", "work-item reference"),
    ("the plan at the end of session " "17", "work-item reference"),
    ("after mile" "stone 4", "work-item reference"),
    ("two seeds (#" "19)", "work-item reference"),
    ("exactly per SP" "EC §2", "document not in the repository"),
    ('"""Coverage (SP' 'EC 2): the exact algorithm"""', "document not in the repository"),
    ("as the Sp" "ec § 5.2 says", "document not in the repository"),
    ("a slope interval (CONVEN" "TIONS, Statistics)", "document not in the repository"),
    ("live at <https://github.com/coverage" "-book/coverage-principle-book>", "made-up address"),
]
REPOSITORY_CLEAN = [
    "see known issues in the README; the issues page lists them",
    "the authors' second point, N = 70 (about 50,000 examples)",
    "sessions of training; a milestone of the field",
    "a TransformerLens bug (https://github.com/TransformerLensOrg/TransformerLens/issues/123)",
    'colour "#555", scrollbar-color: #888 #eee; border: 1px solid #888;',
    "spec = chart.to_dict(); the Vega-Lite spec; SPECS_ENV and SPEC_TYPE0 are names",
    "# 1. a numbered comment; x = 3  # 2 apples; ${#items[@]} and $# in a shell script",
    "the paper's section 2 defines the seen split; Figure 3 shows it",
]


@pytest.mark.parametrize("text, check", REPOSITORY_PLANTED)
def test_the_repository_check_finds_each_planted_reference(text, check):
    found = repository_text_findings(f"first line\nx = 1  # {text}\nlast line\n")
    assert [(line, f.check) for line, f in found] == [(2, check)], found
    assert found[0][1].context == " ".join(f"x = 1  # {text}".split())  # its line, as the context


@pytest.mark.parametrize("text", REPOSITORY_CLEAN)
def test_the_repository_check_passes_ordinary_words(text):
    assert repository_text_findings(text) == []


def test_the_repository_check_reads_tracked_text_files(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "notes.md").write_text("fine\nsee issue " "12\n")
    (tmp_path / "run.sh").write_text("echo ok\n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG issue " b"12")
    (tmp_path / "untracked.py").write_text("# issue " "13\n")
    subprocess.run(["git", "add", "notes.md", "run.sh", "image.png"], cwd=tmp_path, check=True)
    assert sorted(p.name for p in tracked_text_files(tmp_path)) == ["notes.md", "run.sh"]
    found = repository_findings(tmp_path)
    assert list(found) == ["notes.md:2"] and found["notes.md:2"][0].check == "work-item reference"


def test_the_repository_cites_no_work_item_no_unpublished_document_and_no_made_up_address():
    """Every tracked text file, data/QUEUE.sh included: nothing is skipped."""
    found = repository_findings()
    assert found == {}, "\n".join(describe(found))
