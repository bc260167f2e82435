"""The text check over built pages (covlib.book.pagecheck): each check fails on a planted case and passes on
the same page without it. tests/test_site.py runs it over every page of the smoke site."""
from __future__ import annotations

import pytest

from covlib.book.pagecheck import page_findings, site_findings

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
    "issue number": "measured for issue 19",
    "issue number ": "see issues #20",
    "reference to the spec": "as SPEC §2 defines",
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
    (tmp_path / "sub" / "bad.html").write_text(PAGE.format(planted="see SPEC §1"))
    found = site_findings(tmp_path)
    assert list(found) == ["sub/bad.html"] and found["sub/bad.html"][0].check == "reference to the spec"
