"""Chain of thought (covlib.cot): requirement ratios, greedy decoding against teacher forcing, sequence IICG."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib import cot
from covlib.errors import CovlibError
from covlib.learning import open_shipped, ship_run


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The chapter's smoke-sized CoT two-hop and plain two-hop models, trained and archived (seconds)."""
    root = tmp_path_factory.mktemp("cot")
    runs = cot.shipped_runs("smoke")
    out = {}
    for name in ("twohop", "twohop_cot"):
        ship_run(runs[name], root / "shipped", root / "work", progress=False)
        out[name] = open_shipped(runs[name], root / "shipped", root / "work" / "datasets")
    return out


def test_requirement_ratio_pairs_finished_cells_at_the_same_N_and_seed():
    plain = pd.DataFrame({"N": [20, 25, 25, 30], "seed": [0, 0, 1, 0], "n_req": [None, 5000.0, 6000.0, 8000.0]})
    with_cot = pd.DataFrame({"N": [20, 25, 30, 40], "seed": [0, 0, 0, 0], "n_req": [400.0, 1000.0, None, 3000.0]})
    ratios = cot.requirement_ratio(plain, with_cot)
    assert ratios[["N", "seed"]].values.tolist() == [[25, 0]]  # N=20 plain and N=30 CoT unfinished; N=40 unpaired
    assert ratios["ratio"].iloc[0] == pytest.approx(5.0)
    assert cot.geometric_mean([2.0, 8.0]) == pytest.approx(4.0)
    assert np.isnan(cot.geometric_mean([]))


def test_greedy_exact_match_is_teacher_forced_all_tokens_and_never_above_the_answer(shipped):
    model, ds, _, _ = shipped["twohop_cot"]
    assert cot.target_layout(ds) == ["b", "t"] and cot.sequence_positions(ds) == ["x1", "x2", "x3", "b"]
    items = cot.decode_items(model, ds.test.inputs[:300], ds.test.targets[:300], batch_size=64)
    assert len(items) == 300
    assert (items["greedy_exact"] == items["tf_all"]).all()  # while the model is right its inputs are the teacher's
    assert not (items["greedy_exact"] & ~items["tf_answer"]).any()  # exact match implies the teacher-forced answer
    assert (items["greedy_exact"] == (items["greedy_bridges"] & items["greedy_answer"])).all()
    summary = cot.decoding_summary(model, ds, splits=("type_0",), max_items=200)
    outcomes = summary[list(cot.OUTCOMES.values())].sum(axis=1)
    assert outcomes.iloc[0] == pytest.approx(1.0)
    assert summary["tf_answer"].iloc[0] >= summary["greedy_exact"].iloc[0]


def test_decoding_refuses_a_dataset_without_a_bridge_and_mismatched_targets(shipped):
    model, ds, _, _ = shipped["twohop"]
    with pytest.raises(CovlibError, match="no bridge written out"):
        cot.decoding_summary(model, ds)
    cot_model, cot_ds, _, _ = shipped["twohop_cot"]
    with pytest.raises(CovlibError, match="one target row per prompt"):
        cot.decode_items(cot_model, cot_ds.test.inputs[:5], cot_ds.test.targets[:4])


def test_sequence_iicg_covers_the_bridge_position(shipped):
    model, ds, tables, _ = shipped["twohop_cot"]
    table = cot.iicg_sequence_table(model, ds, tables, ["b"], max_items=300)
    assert set(table["position"]) == {"x1", "x2", "x3", "b"}
    assert table["layer"].nunique() == model.cfg.n_layers + 1
    assert table["iicg"].between(-2, 2).all()
    # at the bridge position the embedding is the bridge token itself: items of one bridge are identical there
    emb = table[(table["layer"] == 0) & (table["position"] == "b")].iloc[0]
    assert emb["within"] == pytest.approx(1.0, abs=1e-5)


def test_shipped_runs_and_the_ship_cli_guard(tmp_path, capsys):
    from covlib import cli

    runs = cot.shipped_runs("default")
    assert set(runs) == {"twohop", "twohop_cot", "twohop_fakebridge", "nontree_cot"}
    assert runs["twohop_cot"].dataset["cot"] and runs["twohop_fakebridge"].dataset["fake_bridge"]
    assert len({r.folder for r in runs.values()}) == 4  # four distinct archives
    assert cli.main(["ship", "cot", "--preset", "smoke"]) == 2
    assert "needs --dest" in capsys.readouterr().err
    assert cli.main(["ship", "cot", "--only", "fivehop", "--preset", "smoke", "--dest", str(tmp_path)]) == 2
    assert "no such model" in capsys.readouterr().err and not any(tmp_path.iterdir())  # nothing half-written
