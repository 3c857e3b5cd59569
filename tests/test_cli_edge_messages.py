"""Messages at the edges of the command line's ranges: each says where its bounds come from."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from effstats.cli import main


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    """A long CSV of 8 reference models on 2 tasks of 30 items each, 0/1 scores."""
    root = tmp_path_factory.mktemp("edges")
    rng = np.random.default_rng(1)
    items = [f"t{t}/{i}" for t in range(2) for i in range(30)]
    rows = [(f"m{k}", it, float(rng.random() < 0.3 + 0.06 * k)) for k in range(8) for it in items]
    pd.DataFrame(rows, columns=["model", "item", "score"]).to_csv(root / "ref.csv", index=False)
    return root / "ref.csv"


def _one_error(argv, capsys) -> str:
    code = main([str(a) for a in argv])
    _, err = capsys.readouterr()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("initial, low", [(None, 60), (50, 50)])
def test_max_n_below_initial_says_initial_sets_the_minimum(ref, capsys, tmp_path, initial, low):
    argv = ["sequential", "start", ref, "--out", tmp_path / "s", "--half-width", "0.1", "--max-n", "40"]
    err = _one_error(argv + ([] if initial is None else ["--initial", initial]), capsys)
    assert f"--max-n: expected an integer in [{low}, 60], got 40" in err
    assert f"{'the default ' if initial is None else ''}--initial {low}, the first look's items" in err
    assert "at most the 60 eligible items" in err


@pytest.mark.parametrize("budget", [0, 61])
def test_select_budget_out_of_range_gives_one_range_with_its_reason(ref, capsys, tmp_path, budget):
    err = _one_error(["select", ref, "--budget", budget, "--out", tmp_path / "b"], capsys)
    assert err == (f"effstats select: error: --budget: expected an integer in [4, 60], got {budget} (at least 2 items "
                   "in each of the 2 tasks; at most the reference's 60 items)")
