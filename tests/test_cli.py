"""Tests of the ``effstats audit`` command (effstats/cli.py, effstats/__main__.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from effstats import reliability as R
from effstats.cli import main, read_scores

ROOT = Path(__file__).resolve().parents[1]
HELM = Path("/work/shared/data/leaderboards/helm/accuracy.tsv")
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def wide_table(tmp_path) -> Path:
    """A HELM-like wide table with a published 'Mean win rate' column and '-' cells."""
    rng = np.random.default_rng(0)
    x = np.clip(np.linspace(0.3, 0.8, 8)[:, None] + rng.normal(0, 0.08, (8, 6)), 0, 1).round(3)
    df = pd.DataFrame(x, index=[f"model{i}" for i in range(8)], columns=[f"S{j}" for j in range(6)]).astype(object)
    df.iloc[0, 2] = "-"
    df.insert(0, "Mean win rate", R.mean_win_rate(df).round(3).to_numpy())  # '-' = not evaluated
    df.index.name = "Model"
    path = tmp_path / "scores.tsv"
    df.to_csv(path, sep="\t")
    return path


@pytest.fixture
def long_items(tmp_path) -> Path:
    """Per-example correctness in long format: model, item, scenario, score."""
    rng = np.random.default_rng(1)
    M, n = 6, 600
    ability = np.linspace(-1, 1, M)[:, None]
    X = (rng.random((M, n)) < 1 / (1 + np.exp(-(ability - rng.normal(size=(1, n)))))).astype(int)
    df = pd.DataFrame({"model": np.repeat([f"m{i}" for i in range(M)], n), "item": np.tile(np.arange(n), M),
                       "scenario": np.tile(np.arange(n) % 3, M), "score": X.ravel()})
    path = tmp_path / "items.csv"
    df.to_csv(path, index=False)
    return path


def test_audit_wide_table(wide_table, tmp_path):
    out = tmp_path / "rep"
    assert main(["audit", str(wide_table), "--out", str(out), "--n-boot", "60", "--no-progress"]) == 0
    md = (out / "report.md").read_text()
    for s in ("Reliability (DIoR)", "best_model", "Mean Win Rate sensitivity", "published aggregate",
              "per-example scores"):
        assert s in md
    assert (out / "efficiency_scenarios.png").read_bytes()[:8] == PNG
    rel = pd.read_csv(out / "reliability.csv")
    assert set(rel.objective) == {"kendall", "weighted_tau", "best_model", "model_quality"}
    assert rel["dior"].between(-1, 1).all()
    scores = pd.read_csv(out / "scores.csv")
    # the recomputed MWR equals the one written in the file (rounded to 3 decimals)
    assert (scores["mwr"] - scores["published"]).abs().max() <= 5e-4


def test_audit_long_per_example(long_items, tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["audit", str(long_items), "--by", "scenario", "--out", str(out), "--n-boot", "50"]) == 0
    err = capsys.readouterr().err
    assert "effstats audit" in err and "100%" in err  # tqdm progress bar on stderr
    md = (out / "report.md").read_text()
    assert "examples per scenario" in md and "rank_switch.png" in md
    for f in ("efficiency_examples.png", "rank_switch.png"):
        assert (out / f).read_bytes()[:8] == PNG
    rel = pd.read_csv(out / "reliability.csv")
    assert set(rel.granularity) == {"scenarios", "examples"}


def test_custom_column_names(tmp_path, capsys):
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"system": np.repeat(["a", "b", "c"], 40), "q": np.tile(np.arange(40), 3),
                       "task": np.tile(np.arange(40) % 2, 3), "correct": rng.integers(0, 2, 120)})
    p = tmp_path / "c.csv"
    df.to_csv(p, index=False)
    args = ["audit", str(p), "--by", "task", "--model", "system", "--item", "q", "--score", "correct",
            "--out", str(tmp_path / "o"), "--n-boot", "20", "--no-progress"]
    assert main(args) == 0, capsys.readouterr().err
    assert "3 models, 2 scenarios, 40 examples" in (tmp_path / "o" / "report.md").read_text()


def test_read_long_scenario_table(tmp_path):
    df = pd.DataFrame({"model": ["a", "a", "b", "b", "c"], "task": ["x", "y", "x", "y", "x"],
                       "score": [0.1, 0.2, 0.3, 0.4, 0.5]})
    p = tmp_path / "long.csv"
    df.to_csv(p, index=False)
    wide, pub = read_scores(p, by="task")
    assert wide.shape == (3, 2) and np.isnan(wide.loc["c", "y"]) and pub is None


def test_helm_table_end_to_end(tmp_path):
    if not HELM.exists():
        pytest.skip("HELM table not available")
    out = tmp_path / "helm"
    assert main(["audit", str(HELM), "--out", str(out), "--n-boot", "100", "--no-progress"]) == 0
    md = (out / "report.md").read_text()
    assert "67 models, 16 scenarios, 196 missing cells" in md
    assert "text-davinci-002" in md  # its clone reorders HELM's top models


@pytest.mark.parametrize(
    "rows, args, match",
    [
        ("model,scenario,score\na,x,0.1\na,x,0.2\nb,x,0.3\n", [], "duplicate"),
        ("model,scenario,score\na,x,0.1\nb,x,high\n", [], "non-numeric"),
        ("model,task,score\na,x,0.1\nb,x,0.3\n", [], "--by"),
        ("model,s1,s2\na,0.1,0.2\nb,0.3,0.4\n", ["--n-boot", "0"], "--n-boot"),
        ("model,s1,s2\na,0.1,0.2\nb,0.3,0.4\n", ["--target", "1.5"], "--target"),
        ("model,s1,s2\na,0.1,0.2\n", [], "at least 2 models"),
        ("model,s1\na,0.1\nb,0.2\n", [], "at least 2"),
    ],
)
def test_bad_input_exits_2(tmp_path, capsys, rows, args, match):
    p = tmp_path / "bad.csv"
    p.write_text(rows)
    assert main(["audit", str(p), "--out", str(tmp_path / "o"), "--no-progress", *args]) == 2
    assert match in capsys.readouterr().err


def test_missing_file(tmp_path, capsys):
    assert main(["audit", str(tmp_path / "nope.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_python_dash_m(wide_table, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-m", "effstats", "audit", str(wide_table), "--out", str(tmp_path / "m"),
                        "--n-boot", "30", "--no-progress"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m" / "report.md").exists()


def test_wide_table_model_column_and_metadata(tmp_path):
    p = tmp_path / "w.tsv"
    p.write_text("T\tModel\tAverage\tA\tB\n🟢\tx\t0.2\t0.1\t0.3\n🔶\ty\t0.5\t0.4\t0.6\n🟢\tz\t0.3\t-\t0.3\n")
    wide, pub = read_scores(p)
    assert list(wide.columns) == ["A", "B"] and list(wide.index) == ["x", "y", "z"]
    assert pub.tolist() == [0.2, 0.5, 0.3]
    assert R.mean_win_rate(wide).idxmax() == "y"
