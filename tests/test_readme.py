"""The README's findings are the snapshot's numbers, and its chapter table the experiments' definitions: written by
covlib.book.readme, never by hand. No row or sentence of the findings may contradict a verdict the chapters record."""
from __future__ import annotations

import json
import re

import pytest

from covlib.analyses.equivalence import verdict_words
from covlib.base import project
from covlib.base.errors import CovlibError
from covlib.base.paths import REPO
from covlib.base.project import about_markdown
from covlib.book.readme import (
    ABOUT_BLOCK,
    CHAPTERS_BLOCK,
    END,
    START,
    TIMINGS,
    TIMINGS_BLOCK,
    VERDICT_RULE,
    _effect,
    _prediction_rows,
    _saving_verdict,
    block,
    chapter_table,
    claim_row,
    exponent_row,
    findings,
    findings_block,
    refresh_blocks,
    refresh_readme,
    timings_text,
)
from covlib.book.snapshot import read_snapshot
from covlib.chapters.ch06_path_ambiguity.searches import EXPERIMENTS as CH06_EXPERIMENTS
from covlib.chapters.ch07_chain_of_thought.searches import EXPERIMENTS as CH07_EXPERIMENTS
from covlib.chapters.ch09_diversity_exposure_coverage.stats import MIN_GAP
from covlib.figures.text import run_time
from covlib.search.experiments import BOOK_EXPERIMENTS
from covlib.search.reproduction import CLAIMS

SNAPSHOT = REPO / "tests" / "snapshots" / "metrics_default.json"
README = REPO / "README.md"

# the exponents as the findings name them (this test's own list, so that a label the generator swaps is caught)
EXPONENT_NAMES = {"two-hop": "twohop", "three-hop": "threehop", "parallel two-hop": "parallel_twohop",
                  "two-hop on a Mamba": "twohop_mamba", "two-hop with CoT": "twohop_cot",
                  "three-hop with CoT": "threehop_cot", "five-hop with CoT": "fivehop_cot"}
VERDICT_PHRASES = re.compile(r"\b(reproduced|inconclusive|differs|holds \(same sign\)|contradicted \(opposite sign\))")
LABELS = re.compile(r"(?<![\w-])(" + "|".join(re.escape(label) for label in sorted(EXPONENT_NAMES, key=len,
                                                                                        reverse=True))
                    + r")(?![\w-])", flags=re.I)
NOT_MEASURED = "not measured yet"


def table_rows(text: str) -> dict[str, list[str]]:
    """The findings table: its claim (without the chapter link) -> its cells (claim, paper, book, verdict)."""
    rows = {}
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith(("| the paper's claim", "|---")):
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        rows[re.sub(r" \(\[ch\. \d+\]\([^)]*\)\)$", "", cells[0])] = cells
    return rows


def contradictions(text: str, chapters: dict) -> list[str]:
    """Every place where the findings ``text`` disagree with the verdicts the chapters record: an exponent's or a
    claim's row whose verdict is not the metric's (or a row missing), and a sentence that names an exponent before a
    verdict other than its own, or a verdict after no exponent at all."""
    ch = {name[:2]: m for name, m in chapters.items()}
    ch4, ch7 = ch.get("04", {}), ch.get("07", {})

    def exponent_verdict(key: str) -> str:
        m = ch7 if key.endswith("_cot") else ch4
        return verdict_words(m[f"verdict_{key}"]) if f"verdict_{key}" in m else NOT_MEASURED

    problems, rows = [], table_rows(text)
    for label, key in EXPONENT_NAMES.items():
        row = rows.get(f"{label}: required data ∝ N^c")
        if row is None or row[3] != exponent_verdict(key):
            problems.append(f"row of {label}: {row and row[3]!r}, the metric says {exponent_verdict(key)!r}")
    for claim in CLAIMS:
        m = ch4 if f"claim_{claim.name}_verdict" in ch4 else ch7
        expected = verdict_words(m[f"claim_{claim.name}_verdict"]) if f"claim_{claim.name}_verdict" in m else NOT_MEASURED
        row = rows.get(claim.text.split(" (")[0])
        if row is None or row[3] != expected:
            problems.append(f"row of claim {claim.name}: {row and row[3]!r}, the metric says {expected!r}")
    for line in text.splitlines():
        if line.startswith("|") or line == VERDICT_RULE:
            continue
        start = 0
        for match in VERDICT_PHRASES.finditer(line):
            segment = re.split(r"[.;:](?:\s|$)", line[start:match.start()])[-1]
            named = [m.group(1).lower() for m in LABELS.finditer(segment)]
            names = {label.lower(): key for label, key in EXPONENT_NAMES.items()}
            if not named:
                problems.append(f"{match.group(1)!r} names no exponent: ...{line[max(0, match.start() - 60):match.end()]}")
            for label in named:
                if exponent_verdict(names[label]) != match.group(1):
                    problems.append(f"the findings say {label} {match.group(1)}; the metric says "
                                    f"{exponent_verdict(names[label])}")
            start = match.end()
    return problems


def test_the_readme_states_the_snapshots_numbers():
    written = findings_block(README.read_text(encoding="utf-8"))
    expected = findings(read_snapshot(SNAPSHOT)["chapters"])
    assert written == expected, ("README findings differ from the snapshot; rewrite them with "
                                 "`python -m covlib.book.readme` (or `covlib book --snapshot`)")


def test_the_findings_state_every_number_they_name():
    text = findings(read_snapshot(SNAPSHOT)["chapters"])
    assert not re.search(r"\bnan\b|n/a", text), "a metric the findings read is missing from the snapshot"


def test_no_row_or_sentence_of_the_findings_contradicts_a_verdict():
    chapters = read_snapshot(SNAPSHOT)["chapters"]
    text = findings_block(README.read_text(encoding="utf-8"))
    assert contradictions(text, chapters) == []
    assert len(table_rows(text)) >= len(EXPONENT_NAMES) + len(CLAIMS) + 5  # and non-tree, CoT, taxonomy, prediction


def test_the_contradiction_check_finds_a_wrong_row_and_a_wrong_sentence():
    chapters = read_snapshot(SNAPSHOT)["chapters"]
    text = findings(chapters)
    parallel = next(line for line in text.splitlines() if line.startswith("| parallel two-hop: "))
    wrong_row = text.replace(parallel, parallel.replace("| reproduced |", "| inconclusive |"))
    assert any("row of parallel two-hop" in p for p in contradictions(wrong_row, chapters))
    wrong_sentence = text + "\n* Chapter 7 finds two-hop with CoT reproduced; the rest inconclusive."
    found = contradictions(wrong_sentence, chapters)
    assert any("two-hop with cot reproduced" in p for p in found)
    assert any("'inconclusive' names no exponent" in p for p in found)
    undecided = {name: {k: v for k, v in m.items() if k != "verdict_fivehop_cot"} for name, m in chapters.items()}
    assert any("five-hop with CoT" in p for p in contradictions(text, undecided))  # says differs, metric missing
    assert contradictions(findings(undecided), undecided) == []  # the generator says "not measured yet" there


def test_a_changed_number_changes_the_findings():
    chapters = read_snapshot(SNAPSHOT)["chapters"]
    ch4 = next(name for name in chapters if name.startswith("04"))
    moved = {**chapters, ch4: {**chapters[ch4],
                               "exponent_twohop_logistic": chapters[ch4]["exponent_twohop_logistic"] + 0.5}}
    assert findings(moved) != findings(chapters)


def test_refresh_writes_the_findings_between_the_markers_and_nothing_else(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\n{START}\n{END}\n\nafter\n", encoding="utf-8")
    chapters = read_snapshot(SNAPSHOT)["chapters"]
    assert refresh_readme(readme, chapters) is True
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# Title\n\n") and text.endswith(f"{END}\n\nafter\n")
    assert findings_block(text) == findings(chapters) and findings(chapters).count("\n* ") >= 5
    assert refresh_readme(readme, chapters) is False  # already current
    with pytest.raises(CovlibError, match=r"read_snapshot\(path\)\['chapters'\]"):  # the whole snapshot, not its chapters
        refresh_readme(readme, read_snapshot(SNAPSHOT))
    assert findings_block(readme.read_text(encoding="utf-8")) == findings(chapters)  # left as it was


def test_the_seed_sentences_say_when_an_order_fails_in_some_seed():
    chapter3 = {"edge_seeds": 3, "edge_acc_k_lt3_mean": 0.70, "edge_acc_k_lt3_sd": 0.02, "edge_acc_k3_mean": 0.9,
                "edge_acc_k3_sd": 0.01, "edge_acc_k_gt3_mean": 0.97, "edge_acc_k_gt3_sd": 0.005,
                "edge_order_final_all_seeds": 1, "edge_order_learned_all_seeds": 0}
    text = findings({"03_x": chapter3})
    assert "final ID accuracy is 70% for k<3, 90% for k=3, 97% for k>3 (the mean of 3 training seeds)" in text
    assert "rising with the k-cutoff in every seed." in text
    assert "rising with the k-cutoff not in every seed." in findings({"03_x": {**chapter3,
                                                                              "edge_order_final_all_seeds": 0}})


def test_the_readmes_timings_and_citation_come_from_their_one_place():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert block(text, TIMINGS_BLOCK) == timings_text(json.loads(TIMINGS.read_text())), (
        "README timings differ from benchmarks/timings.json; run `python -m covlib.book.readme`")
    assert block(text, ABOUT_BLOCK) == about_markdown("##")
    assert (REPO / "LICENSE").read_text().startswith("MIT License")


def test_a_timing_not_measured_says_so_and_a_measured_one_is_stated():
    empty = timings_text({"commit": "abc1234", "conditions": "an idle laptop", "book_default_seconds": {},
                          "book_smoke_seconds": None, "site_seconds": None, "ci_minutes": None})
    assert "Measured at commit abc1234, on an idle laptop." in empty
    assert empty.count("not measured at this commit") == 4
    full = timings_text({"commit": "abc1234", "conditions": "x", "book_default_seconds": {"01_a": 12.0, "02_coverage": 700.0},
                         "book_smoke_seconds": 55.0, "site_seconds": 15.2, "ci_minutes": 10.34,
                         "ci_pytest_minutes": 9.0, "ci_tests": 524})
    assert "11.9 minutes in all: `01_a` 12 s, `02_coverage` 11.7 minutes (exact coverage, computed)" in full
    assert "`make book PRESET=smoke`: 55 s" in full and "10.3 minutes, of which pytest 9.0 (524 tests)" in full
    assert "not measured" not in full
    side_by_side = timings_text({"commit": "c", "conditions": "x", "book_default_seconds": {"01_a": 100.0, "02_b": 80.0},
                                 "book_default_wall_seconds": 95.0})
    assert ("two chapters at a time): 95 s of wall-clock time; one by one (`make book JOBS=1`) about 180 s, the sum "
            "of the chapters' own times: `01_a` 100 s, `02_b` 80 s.") in side_by_side


def test_refresh_blocks_writes_both_blocks_and_nothing_else(tmp_path):
    readme, timings = tmp_path / "README.md", tmp_path / "timings.json"
    timings.write_text(json.dumps({"commit": "c", "conditions": "x", "book_default_seconds": {"01_a": 3.0}}))
    readme.write_text(f"top\n{ABOUT_BLOCK[0]}\nold\n{ABOUT_BLOCK[1]}\nmiddle\n{TIMINGS_BLOCK[0]}\n{TIMINGS_BLOCK[1]}\nend\n")
    assert refresh_blocks(readme, timings) is True
    text = readme.read_text()
    assert text.startswith("top\n") and "\nmiddle\n" in text and text.endswith(f"{TIMINGS_BLOCK[1]}\nend\n")
    assert "old" not in text and "`01_a` 3 s" in text and refresh_blocks(readme, timings) is False


@pytest.mark.parametrize("url", [None, "https://example.org/covlib-book"])
def test_the_readme_links_the_repository_only_once_it_has_an_address(tmp_path, monkeypatch, url):
    """covlib.base.project.REPOSITORY_URL None: the about block names the repository and cites the book without a
    link; set: `python -m covlib.book.readme` writes the link into both."""
    monkeypatch.setattr(project, "REPOSITORY_URL", url)
    readme = tmp_path / "README.md"
    readme.write_text(f"{ABOUT_BLOCK[0]}\nold\n{ABOUT_BLOCK[1]}\n{TIMINGS_BLOCK[0]}\n{TIMINGS_BLOCK[1]}\n")
    refresh_blocks(readme, TIMINGS)
    about = block(readme.read_text(), ABOUT_BLOCK)
    if url is None:
        assert project.REPOSITORY_WITHOUT_URL in about and "\\url" not in about and "howpublished" not in about
    else:
        assert f"live at <{url}>:" in about and f"\\url{{{url}}}" in about




def test_the_chapter_table_is_written_from_the_experiments_definitions():
    text = README.read_text(encoding="utf-8")
    assert block(text, CHAPTERS_BLOCK) == chapter_table(), (
        "README's chapter table differs from the experiments' definitions; run `python -m covlib.book.readme`")
    rows = {line.split(" | ")[0].strip("| `"): line for line in chapter_table().splitlines()[2:]}
    assert len(rows) == 10
    defined = ([("04", e) for e in BOOK_EXPERIMENTS.values()] + [("06", e) for e in CH06_EXPERIMENTS.values()]
               + [("07", e) for e in CH07_EXPERIMENTS.values()])
    for chapter, e in defined:  # each experiment's N range and seeds, in its chapter's row
        row = next(line for stem, line in rows.items() if stem.startswith(chapter))
        Ns = sorted(e["N"])
        span = (f"N = {Ns[0]}-{Ns[-1]} over {len(Ns)} values and {len(e['seeds'])} seed" if len(Ns) > 1 else
                f"N = {Ns[0]} with {len(e['seeds'])} seed")
        assert span in row, (chapter, span)
    mamba = BOOK_EXPERIMENTS["twohop_mamba"]
    assert "4-layer width-128 Mamba" in rows["04_how_much_data"] and mamba["model"] == "mamba-L4-d128"


def test_a_chapter_table_follows_a_changed_experiment(monkeypatch):
    monkeypatch.setitem(BOOK_EXPERIMENTS, "parallel_twohop", {**BOOK_EXPERIMENTS["parallel_twohop"],
                                                              "N": [10, 40], "seeds": [0, 1, 2]})
    assert "parallel two-hop N = 10-40 over 2 values and 3 seeds" in chapter_table()


def test_the_readme_says_how_long_the_searches_took_in_one_unit():
    """The README says the searches took days of CPU; chapter 4's recorded run-hours say how many."""
    chapters = read_snapshot(SNAPSHOT)["chapters"]
    hours = next(m for name, m in chapters.items() if name.startswith("04"))["cpu_hours"]
    text = README.read_text(encoding="utf-8")
    assert "took days of CPU" in text and hours >= 24
    assert run_time(hours) in findings_block(text)
    assert run_time(47.1266) == "47.1 run-hours, about 2.0 days of one CPU core"


def test_an_effect_per_point_is_worded_per_point_with_its_total_and_never_for_a_tiny_gap():
    m = {"k3_coverage_gap_between_arms": 17.63, "k3_effect_per_coverage_point": 0.0586,
         "k3_effect_per_coverage_point_ci_low": -0.0433, "k3_effect_per_coverage_point_ci_high": 0.1605}
    assert _effect(m, "k3_") == ("accuracy moved by +1.03 pp in all, +0.06 pp per point of 3-coverage (95% interval "
                                 "-0.04 to +0.16 per point)")
    tiny = {"coverage_gap_between_arms": -0.055, "effect_per_coverage_point": 5.09,
            "effect_per_coverage_point_ci_low": -123.7, "effect_per_coverage_point_ci_high": 133.9}
    assert abs(tiny["coverage_gap_between_arms"]) < MIN_GAP
    assert _effect(tiny, "") == f"under {MIN_GAP} points: too little to read an effect of 3-coverage"
    assert _effect({}, "") == "no effect estimable"
    chapters = read_snapshot(SNAPSHOT)["chapters"]
    nine = findings_block(README.read_text(encoding="utf-8")).split("[Chapter 9]")[1].split("\n")[0]
    m9 = next(m for name, m in chapters.items() if name.startswith("09"))
    for prefix in ("", "surface_", "k3_", "k3_wide_"):  # every contrast the README names
        effect = m9[f"{prefix}effect_per_coverage_point"]
        if abs(m9[f"{prefix}coverage_gap_between_arms"]) < MIN_GAP:
            assert f"{effect:+.1f}" not in nine and f"{effect:+.2f}" not in nine
        else:
            assert f"{effect:+.2f} pp per point" in nine
            assert f"{effect * m9[f'{prefix}coverage_gap_between_arms']:+.2f} pp in all" in nine


def test_cot_saving_is_set_against_the_papers_range():
    assert _saving_verdict({}) == NOT_MEASURED
    assert _saving_verdict({"data_ratio_twohop_cot": 2.4, "data_ratio_twohop_cot_min": 1.7,
                            "data_ratio_twohop_cot_max": 2.9, "data_ratio_twohop_cot_floor": 2.8}).startswith("smaller")
    assert _saving_verdict({"data_ratio_twohop_cot": 6.0}) == "within the paper's range for two-hop"
    assert _saving_verdict({"data_ratio_twohop_cot": 4.0, "data_ratio_twohop_cot_max": 6.0}).startswith("overlaps")


def test_the_prediction_rows_read_whatever_chapter_10_records():
    rows = _prediction_rows({})
    assert [r.book for r in rows] == [NOT_MEASURED, NOT_MEASURED]  # out of sample, and preregistered
    oos = _prediction_rows({"predict_oos_within_115_share": 0.4, "predict_oos_within_125_share": 0.6,
                            "predict_oos_cells": 30, "predict_preregistered_tasks": 2,
                            "predict_preregistered_cells_measured": 0})
    assert oos[0].book == "40% of 30 cells within 1.15x of their prediction, 60% within 1.25x"
    assert oos[1].book == "predictions for 2 tasks committed; not measured yet" and oos[1].verdict == NOT_MEASURED
    misses = _prediction_rows({"predict_oos_within_115_share": 0.4, "predict_oos_within_125_share": 0.6,
                               "predict_oos_cells": 30, "predict_oos_median_ratio_twohop": 1.04,
                               "predict_oos_median_ratio_parallel_twohop": 0.77,
                               "predict_oos_median_ratio_fivehop_cot": 1.44})[0]
    assert misses.book.endswith("; the task medians outside 1.25x: parallel two-hop 0.77, five-hop with CoT 1.44")
    assert misses.verdict.endswith("not met")
    measured = _prediction_rows({"predict_preregistered_tasks": 2, "predict_preregistered_cells_measured": 4,
                                 "predict_preregistered_ratio_min": 0.8, "predict_preregistered_ratio_max": 1.3})
    assert measured[1].book == "4 cells measured (2 tasks preregistered): measured / predicted 0.80-1.30"
    assert measured[1].verdict == "no figure in the paper to compare"  # a snapshot from before the share was recorded
    scored = _prediction_rows({"predict_preregistered_tasks": 3, "predict_preregistered_cells_measured": 2,
                               "predict_preregistered_ratio_min": 1.72, "predict_preregistered_ratio_max": 2.32,
                               "predict_preregistered_within_125_share": 0.0,
                               "predict_preregistered_tasks_measured": 1})[1]
    assert scored.verdict == "0% of the cells measured so far within 1.25x of their prediction"
    assert scored.book == "2 cells measured (1 of the 3 tasks preregistered): measured / predicted 1.72-2.32"
    amended = _prediction_rows({"predict_preregistered_tasks": 3, "predict_preregistered_cells_measured": 4,
                                "predict_preregistered_ratio_min": 1.72, "predict_preregistered_ratio_max": 2.32,
                                "predict_preregistered_both_oos_cells": 0})[1]
    assert amended.book.endswith("the amended rule written after the first cells (the larger of its two evidences): "
                                 "no cell measured since")
    amended = _prediction_rows({"predict_preregistered_tasks": 3, "predict_preregistered_cells_measured": 6,
                                "predict_preregistered_ratio_min": 1.72, "predict_preregistered_ratio_max": 2.32,
                                "predict_preregistered_both_oos_cells": 2, "predict_preregistered_both_ratio_min": 0.9,
                                "predict_preregistered_both_ratio_max": 1.1})[1]
    assert amended.book.endswith("2 cells measured since, 0.90-1.10")
    head = _prediction_rows({"predict_rule": "2 x the data", "predict_rule_fitted_on": "twohop",
                             "predict_ratio_twohop_min": 0.9, "predict_ratio_twohop_max": 1.1,
                             "predict_ratio_threehop_min": 1.3, "predict_ratio_threehop_max": 1.9,
                             "predict_within_115_share": 0.5})[0]
    assert "two-hop 0.90-1.10 (in sample)" in head.book
    assert head.verdict == "within 1.15x on no set but its own; not on three-hop"
    # a rule fitted on every task (no predict_rule_fitted_on) has no "fitted on one task" row
    assert len(_prediction_rows({"predict_rule": "x", "predict_ratio_authors_min": 0.8,
                                 "predict_ratio_authors_max": 1.1})) == 2


def test_every_exponent_and_claim_row_gives_its_interval_and_what_it_rests_on():
    exponent = exponent_row({"exponent_twohop_logistic": 2.16, "exponent_twohop_logistic_ci_low": 1.88,
                             "exponent_twohop_logistic_ci_high": 2.54, "exponent_twohop_logistic_n_values": 6,
                             "exponent_twohop_logistic_seeds": 2, "verdict_twohop": "inconclusive"}, "twohop")
    assert exponent.book == "c = 2.16 (95% interval 1.88 to 2.54; 6 values of N, 2 seeds)"
    claim = next(c for c in CLAIMS if c.name == "cot_flattens_twohop")
    said = {"claim_cot_flattens_twohop_difference": -0.28, "claim_cot_flattens_twohop_ci_low": -1.0,
            "claim_cot_flattens_twohop_ci_high": 0.5, "claim_cot_flattens_twohop_verdict": "inconclusive",
            "claim_cot_flattens_twohop_cells": 8, "claim_cot_flattens_twohop_n_values": 4,
            "claim_cot_flattens_twohop_paired": 1}
    assert "(95% interval -1.00 to +0.50; 8 paired cells at 4 values of N)" in claim_row(said, claim, "04").book
    unpaired = claim_row(said | {"claim_cot_flattens_twohop_paired": 0}, claim, "04").book
    assert "8 cells at 4 values of N" in unpaired and "paired" not in unpaired


def test_the_pattern_groups_the_verdicts_and_says_which_claims_the_data_bear_out():
    from covlib.book.readme import pattern

    ch4 = {"verdict_twohop": "inconclusive", "exponent_twohop_logistic_ci_low": 1.9,
           "exponent_twohop_logistic_ci_high": 2.5, "verdict_parallel_twohop": "reproduced",
           "claim_cot_flattens_threehop_verdict": "same_sign", "claim_cot_flattens_threehop_difference": 1.1,
           "claim_cot_flattens_twohop_verdict": "inconclusive", "claim_cot_flattens_twohop_difference": -0.3,
           "claim_mamba_equals_transformer_verdict": "differs", "claim_mamba_equals_transformer_difference": 0.6}
    ch7 = {"verdict_threehop_cot": "inconclusive", "exponent_threehop_cot_logistic_ci_low": 1.6,
           "exponent_threehop_cot_logistic_ci_high": 2.1}
    said = pattern({"04": ch4, "07": ch7})
    assert said.startswith("*The pattern.* Against the paper's 7 exponents: two-hop and three-hop with CoT "
                           "inconclusive; parallel two-hop reproduced.")
    assert "are 0.50 to 0.60 wide in c" in said and "a band 0.50 wide" in said
    assert ("Of the paper's 3 comparative claims, 1 is borne out (chain of thought flattens three-hop's law), 1 is "
            "contradicted (a Mamba's exponent equals the transformer's) and 1 is left open; in one (chain of thought "
            "flattens two-hop's law) the book's estimate runs against the paper") in said
    sentences = [p for p in contradictions(said, {"04_how_much_data": ch4, "07_chain_of_thought": ch7})
                 if not p.startswith("row of")]  # no table here: only the sentence is checked
    assert sentences == []
    assert pattern({}) == ""  # nothing recorded: no pattern


def test_the_pattern_says_whether_the_decided_verdicts_survive_being_read_as_families():
    from covlib.book.readme import pattern

    ch4 = {"verdict_twohop": "inconclusive", "verdict_twohop_family": "inconclusive",
           "verdict_parallel_twohop": "reproduced", "verdict_parallel_twohop_family": "inconclusive",
           "claim_cot_flattens_threehop_verdict": "same_sign", "claim_cot_flattens_threehop_difference": 1.1,
           "claim_cot_flattens_threehop_family_verdict": "inconclusive",
           "claim_threehop_steeper_verdict": "inconclusive", "claim_threehop_steeper_difference": 0.5,
           "claim_threehop_steeper_family_verdict": "inconclusive"}
    said = pattern({"04": ch4})
    assert said.endswith("1 is borne out (chain of thought flattens three-hop's law) and 1 is left open. Read as two "
                         "families tested at once (Bonferroni: each exponent judged at the level that holds for all 7 "
                         "together, each claim for all 6), no decided verdict stands: parallel two-hop (reproduced) "
                         "and that chain of thought flattens three-hop's law (borne out) become "
                         "inconclusive.")
    ch4["claim_cot_flattens_threehop_family_verdict"] = "same_sign"
    assert said.split("Read as")[0] in pattern({"04": ch4}) and pattern({"04": ch4}).endswith(
        "that chain of thought flattens three-hop's law (borne out) keeps its verdict, and parallel two-hop "
        "(reproduced) becomes inconclusive.")
    for key in [k for k in ch4 if "family" in k]:  # a snapshot from before the family reading: no clause
        del ch4[key]
    assert "famil" not in pattern({"04": ch4})


def test_the_pattern_says_whether_a_differing_exponents_law_bends():
    from covlib.book.readme import pattern

    ch7 = {"verdict_fivehop_cot": "differs", "exponent_fivehop_cot_lower_half": 1.49,
           "exponent_fivehop_cot_upper_half": 1.50}
    assert ("The law of five-hop with CoT is about as steep over the smaller half of its N (c = 1.49) as over the "
            "larger (1.50): no bend within the N measured explains its gap from the paper.") in pattern({"07": ch7})
    ch7["exponent_fivehop_cot_upper_half"] = 2.0
    assert "its law bends within the N it measured (c = 1.49 over the smaller half" in pattern({"07": ch7})
    del ch7["exponent_fivehop_cot_upper_half"]
    assert "bend" not in pattern({"07": ch7})
