"""The README's findings are the snapshot's numbers: written by covlib.book.readme, never by hand."""
from __future__ import annotations

import json

import pytest

from covlib.base import project
from covlib.base.errors import CovlibError
from covlib.base.paths import REPO
from covlib.base.project import about_markdown
from covlib.book.readme import (
    ABOUT_BLOCK,
    END,
    START,
    TIMINGS,
    TIMINGS_BLOCK,
    _below_paper,
    _fivehop_saving,
    _floor_patience,
    _k3,
    _mamba,
    _nontree_cot,
    _placeholder,
    block,
    findings,
    findings_block,
    refresh_blocks,
    refresh_readme,
    timings_text,
)
from covlib.book.snapshot import read_snapshot

SNAPSHOT = REPO / "tests" / "snapshots" / "metrics_default.json"


def test_the_readme_states_the_snapshots_numbers():
    written = findings_block((REPO / "README.md").read_text(encoding="utf-8"))
    expected = findings(read_snapshot(SNAPSHOT)["chapters"])
    assert written == expected, ("README findings differ from the snapshot; rewrite them with "
                                 "`covlib book --preset default --only 02 03 04 05 06 07 08 09 --snapshot "
                                 "tests/snapshots/metrics_default.json --reason ...`")


def test_a_changed_number_changes_the_findings():
    chapters = read_snapshot(SNAPSHOT)["chapters"]
    ch4 = next(name for name in chapters if name.startswith("04"))
    moved = {**chapters, ch4: {**chapters[ch4], "exponent_twohop": chapters[ch4]["exponent_twohop"] + 0.5}}
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
    assert "3 training seeds" in text and "k<3 70.0% ± 2.0%" in text
    assert "rises with the k-cutoff in every seed" in text and "evidence not in every seed" in text


def test_the_non_tree_cot_sentence_follows_the_searchs_verdict():
    assert "not in the cache" in _nontree_cot({"nontree_cot_reachable": float("nan")})
    assert "not in the cache" in _nontree_cot({})
    assert "does not rescue" in _nontree_cot({"nontree_cot_reachable": 0})
    assert "rescues it here" in _nontree_cot({"nontree_cot_reachable": 1})


def test_the_five_hop_saving_is_a_ratio_a_bound_or_nothing():
    nan = float("nan")
    assert _fivehop_saving({}) == "" and _fivehop_saving({"data_ratio_fivehop_cot": nan}) == ""
    assert _fivehop_saving({"data_ratio_fivehop_cot": 6.25}) == ", five-hop at its smallest N 6.2x"
    assert "at least 14.2x" in _fivehop_saving({"data_ratio_fivehop_cot": nan, "data_ratio_fivehop_cot_at_least": 14.2})


def test_the_longer_floor_sentence_waits_for_every_cell_and_then_gives_ratio_and_tilt():
    from covlib.book.readme import _longer_floor
    done = {"longer_floor_steps": 4000, "longer_floor_pairs_twohop": 11, "longer_floor_pending_twohop": 0,
            "longer_floor_nreq_ratio_twohop": 0.84, "longer_floor_tilt_twohop": -0.04,
            "longer_floor_tilt_twohop_ci_low": -0.21, "longer_floor_tilt_twohop_ci_high": 0.12}
    assert _longer_floor({}) == "" and _longer_floor(done | {"longer_floor_pending_twohop": 3}) == ""
    assert _longer_floor(done) == (" A floor twice as long (4,000 steps) gives two-hop 0.84 times the n_req (11 cells) "
                                   "and moves its exponent by -0.04 (95% interval -0.21 to +0.12).")


def test_the_cot_ratios_under_the_floor_name_only_tasks_with_a_pair():
    from covlib.book.readme import _floor_ratios
    assert _floor_ratios({}) == "" and _floor_ratios({"data_ratio_twohop_cot_floor_pairs": 0}) == ""
    m = {"data_ratio_twohop_cot_floor": 2.77, "data_ratio_twohop_cot_floor_pairs": 9,
         "data_ratio_threehop_cot_floor_pairs": 0, "data_ratio_fivehop_cot_floor": 9.7,
         "data_ratio_fivehop_cot_floor_pairs": 1}
    assert _floor_ratios(m) == "; under the step floor two-hop 2.8x (9 pairs), five-hop 9.7x (1 pair)"


def test_the_mamba_sentence_waits_for_the_cache_and_then_states_the_ratio():
    assert _mamba({}) == ""
    pending = {"params_mamba": 474_496, "params_default": 801_792, "n_req_ratio_mamba_to_default": float("nan")}
    assert "queued" in _mamba(pending) and "474,496 parameters against 801,792" in _mamba(pending)
    one_n = {**pending, "n_req_ratio_mamba_to_default": 1.17, "exponent_twohop_mamba": float("nan")}
    assert "its exponent not measured yet (it needs two values of N finished), 1.17x" in _mamba(one_n)
    two_n = {**one_n, "n_req_ratio_mamba_to_default": 1.09, "exponent_twohop_mamba": 1.22,
             "exponent_twohop_mamba_n_values": 2, "exponent_twohop_mamba_seeds": 1}
    assert ("N^1.22 (2 values of N, 1 seed: too few for an interval or to set against the transformer's; chapter 4: "
            "how far the seed gap alone moves it), 1.09x") in _mamba(two_n)
    done = {**pending, "n_req_ratio_mamba_to_default": 1.31, "exponent_twohop_mamba": 2.2,
            "exponent_twohop_mamba_ci_low": 1.9, "exponent_twohop_mamba_ci_high": 2.5,
            "exponent_twohop_mamba_n_values": 4, "exponent_twohop_mamba_seeds": 1}
    assert "N^2.20 (95% interval 1.90 to 2.50; 4 values of N, 1 seed), 1.31x the transformer's data" in _mamba(done)
    floor = {**done, "n_req_ratio_mamba_to_default_floor": 0.97}
    assert "1.31x (0.97x under the floor) the transformer's data" in _mamba(floor)
    assert "under the floor" not in _mamba({**done, "n_req_ratio_mamba_to_default_floor": float("nan")})
    refit = {**floor, "exponent_twohop_mamba_floor": 2.4, "exponent_twohop_mamba_floor_ci_low": 2.1,
             "exponent_twohop_mamba_floor_ci_high": 2.7, "exponent_twohop_mamba_floor_n_values": 4,
             "exponent_twohop_mamba_floor_seeds": 2}
    assert ("N^2.20 (95% interval 1.90 to 2.50; 4 values of N, 1 seed) under the authors' rule, N^2.40 (95% interval "
            "2.10 to 2.70; 4 values of N, 2 seeds) under the floor, 1.31x (0.97x under the floor)") in _mamba(refit)


def test_the_below_paper_sentence_says_what_the_floor_moved_once_an_exponent_finishes_under_it():
    paper = {"twohop": 2.26, "threehop": 2.58}
    authors = {"exponent_twohop": 2.11, "exponent_twohop_ci_low": 1.82, "exponent_twohop_ci_high": 2.38,
               "exponent_threehop": 2.31, "exponent_threehop_floor": float("nan")}
    assert _below_paper({"exponent_twohop": 2.40}, paper) == ""  # nothing below the paper: nothing to explain
    waiting = _below_paper(authors, paper)
    assert "2 of these 2 exponents lie below" in waiting and "no exponent has finished under it yet" in waiting
    rose = _below_paper({**authors, "exponent_twohop_floor": 2.29, "exponent_twohop_floor_ci_low": 2.04,
                         "exponent_twohop_floor_ci_high": 2.54}, paper)
    assert ("two-hop 2.11 (95% interval 1.82 to 2.38) under the authors' rule, 2.29 (95% interval 2.04 to 2.54) "
            "under the floor: up 0.18, from 0.15 below the paper's 2.26 to 0.03 above it") in rose
    assert "without proving it (1 more still searching under the floor)" in rose
    fell = _below_paper({**authors, "exponent_twohop_floor": 1.70}, paper)
    assert "down 0.41, away from the paper's" in fell and "does not explain the whole gap" in fell
    closer = _below_paper({**authors, "exponent_twohop_floor": 2.20}, paper)
    assert "up 0.09, toward the paper's 2.26" in closer  # still below it
    onto = _below_paper({**authors, "exponent_twohop_floor": 2.262}, paper)
    assert "up 0.15, to the paper's 2.26;" in onto  # equal to two decimals: neither toward nor past it


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


def test_the_shared_operator_sentence_follows_the_reuse_numbers():
    from covlib.book.readme import _per_point, _shared_operator

    base = {"acc_own_role_atomic": 0.44, "acc_own_role_atomic_control": 0.07, "own_role_control_has_atomic": 0}
    assert _shared_operator(base).endswith("the controls at equal data and steps are not measured yet.")
    assert "for distinct tables without atomic facts" in _shared_operator(base)
    run = base | {"acc_reuse_second_role": 0.20, "acc_reuse_second_role_control": 0.05, "n_reuse_second_role": 5000,
                  "p_reuse_second_role": 1e-9, "seeds_reuse_second_role": 2, "own_role_control_has_atomic": 1}
    run |= {"reuse_second_role_shown": 1, "p_reuse_second_role_max_seed": 1e-6}
    assert _shared_operator(run).endswith("(2 seeds, one-sided p = 1e-09 pooled, p = 1e-06 in the weakest seed): "
                                          "reuse shown.")
    split = run | {"reuse_second_role_shown": 0, "p_reuse_second_role_max_seed": 0.14}
    assert _shared_operator(split).endswith("p = 0.14 in the weakest seed): reuse not shown: the seeds disagree.")
    assert _shared_operator(split | {"p_reuse_second_role": 0.4}).endswith("reuse not shown.")
    no_control = run | {"acc_reuse_second_role_control": float("nan"), "p_reuse_second_role": float("nan")}
    assert _shared_operator(no_control).endswith("the controls at equal data and steps are not measured yet.")
    assert _per_point({"effect_per_coverage_point": float("nan")}, "") == "not estimable"
    assert _per_point({"x_effect_per_coverage_point": 5.09, "x_effect_per_coverage_point_ci_low": -123.7,
                       "x_effect_per_coverage_point_ci_high": 133.9}, "x_") == "+5.1 pp, 95% interval -124 to +134"
    assert _per_point({"effect_per_coverage_point": -0.084, "effect_per_coverage_point_ci_low": -0.273,
                       "effect_per_coverage_point_ci_high": 0.104}, "") == "-0.08 pp, 95% interval -0.27 to +0.10"


def test_the_k3_clause_adds_the_longer_runs_once_they_are_cached():
    m = {"contrast_sizes_qualifying": 2, "k3_coverage_gap_between_arms": 13.78, "k3_effect_per_coverage_point": -0.08,
         "k3_effect_per_coverage_point_ci_low": -0.27, "k3_effect_per_coverage_point_ci_high": 0.10}
    assert _k3(m).endswith("per point.") and "+13.8 points" in _k3(m)
    longer = {**m, "k3_long_steps": 8000, "k3_long_best_type0_high": 0.178, "k3_long_best_type0_low": 0.16}
    assert ("trained 8,000 steps, its first pair reaches at best 17.8% (high arm) and 16.0% (low arm): more steps do "
            "not lift the models off the floor") in _k3(longer)
    assert "leave the floor" in _k3({**longer, "k3_long_best_type0_high": 0.7, "k3_long_off_floor": True})
    assert "among 1,000 random sets moved it by +13.8" in _k3({**m, "k3_candidates": 1000})


def test_the_k3_clause_reads_the_wider_selection_as_a_contrast_at_the_floor_or_off_it():
    m = {"contrast_sizes_qualifying": 2, "k3_coverage_gap_between_arms": 13.78, "k3_effect_per_coverage_point": -0.08,
         "k3_effect_per_coverage_point_ci_low": -0.27, "k3_effect_per_coverage_point_ci_high": 0.10,
         "k3_wide_coverage_gap_between_arms": float("nan")}
    assert _k3(m).endswith("per point.")  # not trained yet: nothing said of it
    wide = {**m, "k3_wide_candidates": 10000, "k3_wide_coverage_gap_between_arms": 17.61,
            "k3_wide_effect_per_coverage_point": 0.05, "k3_wide_effect_per_coverage_point_ci_low": -0.1,
            "k3_wide_effect_per_coverage_point_ci_high": 0.2, "k3_wide_runs_per_arm": 6, "k3_wide_acc_high": 0.171,
            "k3_wide_acc_low": 0.162, "k3_wide_at_floor": True}
    assert ("Chosen among 10,000 random sets, the arms moved 3-coverage by +17.6 points and accuracy by +0.05 pp, 95% "
            "interval -0.10 to +0.20 per point (6 runs per arm, at 17.1% and 16.2% ID accuracy): at the floor") in _k3(wide)
    assert _k3({**wide, "k3_wide_at_floor": False}).endswith("ID accuracy).")


def test_the_placeholder_sentence_gives_its_cells_spread_and_says_when_it_is_undecided():
    m = {"placeholder_saving_share": 0.053, "placeholder_saving_share_n_values": 3, "placeholder_saving_share_seeds": 2,
         "placeholder_saving_share_give_up_floor": 2000, "placeholder_saving_share_min": -0.07,
         "placeholder_saving_share_max": 0.27}
    assert _placeholder(m) == ("the placeholder's own searches get 5% of CoT's data saving (3 values of N, 2 seeds, the "
                               "step floor; cells from -7% to +27%). ")
    ci = {**m, "placeholder_saving_share_ci_low": -0.11, "placeholder_saving_share_ci_high": 0.17}
    assert "cells from -7% to +27%, mean's 95% interval -11% to +17%). " in _placeholder(ci)
    assert "+27%). " in _placeholder({**ci, "placeholder_saving_share_ci_low": float("nan")})
    few = _placeholder({**m, "placeholder_saving_share_n_values": 2, "placeholder_saving_share_give_up_floor": 0})
    assert "(2 values of N, 2 seeds, the authors' give-up rule; cells" in few and "too few cells" in few
    assert _placeholder({}) == ""


def test_the_floor_patience_sentence_waits_for_floor_probes_and_then_reads_their_end():
    assert _floor_patience({}) == ""
    assert _floor_patience({"floor_hazard_last_window": float("nan"), "floor_near_misses": 0}) == ""
    said = _floor_patience({"floor_hazard_last_window": 0.0316, "floor_near_misses": 20})
    assert said.endswith("3% reached it there; 20 failures under it ended within a point of the threshold, so a longer "
                         "floor would likely flip a few more.")
    climbing = _floor_patience({"floor_hazard_last_window": 0.0316, "floor_near_misses": 20, "floor_failures_climbing": 60})
    assert "and 60 were still climbing when they gave up, so n_req is the data needed within that patience" in climbing


def test_the_two_hop_requirement_at_the_papers_n_is_set_beside_the_papers():
    from covlib.book.readme import _largest_n

    assert _largest_n({}) == "the authors' models need 27,000 examples at N = 50"
    at_50 = {"n_req_ratio_to_paper_N50": 0.94, "n_req_twohop_N70": float("nan")}
    assert _largest_n(at_50) == ("the authors' models need 27,000 examples at N = 50, this book's 25,380 (0.94 of "
                                 "theirs, under the authors' rule)")
    assert _largest_n({**at_50, "n_req_twohop_N70": 47_123.4}).endswith("; 50,000 at N = 70, this book's 47,123")
    one_seed = _largest_n({**at_50, "n_req_twohop_N70": 47_123.4, "n_req_twohop_N70_seeds": 1})
    assert one_seed.endswith("this book's 47,123 (1 seed)")  # a single seed's requirement says so
