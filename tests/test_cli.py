"""Tests of the ``effstats audit`` command (effstats/cli.py, effstats/_entry.py, effstats/__main__.py)."""
from __future__ import annotations

import os
import warnings
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import effstats
from effstats import ResponseMatrix
from effstats import reliability as R
from effstats.cli import main, read_scores
from effstats.datasets import simulate_responses

ROOT = Path(__file__).resolve().parents[1]
HELM = Path(effstats.__file__).parent / "datasets" / "data" / "leaderboards" / "helm" / "accuracy.tsv"  # bundled copy
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


def _audited(out) -> tuple[list, list]:
    """The models (sorted) and the scenarios (sorted) an audit report covers, read from its CSV tables."""
    models = sorted(pd.read_csv(out / "scores.csv", dtype={"model": str})["model"])
    scenarios = sorted(pd.read_csv(out / "scenarios.csv", dtype={"scenario": str})["scenario"])
    return models, scenarios


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
    assert "100%" not in err and "it/s" not in err  # captured stderr is no terminal: no progress bar
    md = (out / "report.md").read_text()
    assert "examples per scenario" in md and "rank_switch.png" in md
    for f in ("efficiency_examples.png", "rank_switch.png"):
        assert (out / f).read_bytes()[:8] == PNG
    rel = pd.read_csv(out / "reliability.csv")
    assert set(rel.granularity) == {"scenarios", "examples"}


def test_audit_long_per_example_reads_a_nan_score_as_a_row_not_evaluated(long_items, tmp_path, capsys):
    df = pd.read_csv(long_items)
    df.loc[[5, 700, 1900], "score"] = np.nan  # a judge's failures in a per-example export
    df.to_csv(long_items, index=False)
    out = tmp_path / "rep"
    assert main(["audit", str(long_items), "--by", "scenario", "--out", str(out), "--n-boot", "20"]) == 0
    said = "score: NaN in 3 of 3600 rows of column 'score': read as cells not evaluated"
    assert capsys.readouterr().err.count(said) == 1 and said in (out / "report.md").read_text()
    models, scenarios = _audited(out)
    assert len(models) == 6 and scenarios == ["0", "1", "2"]


def test_custom_column_names(tmp_path, capsys):
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"system": np.repeat(["a", "b", "c"], 40), "q": np.tile(np.arange(40), 3),
                       "task": np.tile(np.arange(40) % 2, 3), "correct": rng.integers(0, 2, 120)})
    p = tmp_path / "c.csv"
    df.to_csv(p, index=False)
    args = ["audit", str(p), "--by", "task", "--model", "system", "--item", "q", "--score", "correct",
            "--out", str(tmp_path / "o"), "--n-boot", "20", "--no-progress"]
    assert main(args) == 0, capsys.readouterr().err
    models, scenarios = _audited(tmp_path / "o")
    assert models == ["a", "b", "c"] and scenarios == ["0", "1"]
    assert "40 examples" in (tmp_path / "o" / "report.md").read_text()


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
    models, scenarios = _audited(out)
    assert len(models) == 67 and len(scenarios) == 16
    assert "196 missing cells" in md
    assert "text-davinci-002" in md  # its clone reorders HELM's top models


@pytest.mark.parametrize(
    "rows, args, match",
    [
        ("model,scenario,score\na,x,0.1\na,x,0.2\nb,x,0.3\n", ["--duplicates", "error"], "duplicate"),
        ("model,scenario,score\na,x,0.1\nb,x,high\n", [], "column 'score' holds 'high', not a number"),
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


def test_missing_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # without --out the report goes to ./reliability_report
    assert main(["audit", str(tmp_path / "nope.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_python_dash_m(wide_table, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-m", "effstats", "audit", str(wide_table), "--out", str(tmp_path / "m"),
                        "--n-boot", "30", "--no-progress"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m" / "report.md").exists()


INTERRUPTED_LINE = "effstats audit: interrupted; files already written are complete, nothing half-written"


def _entry_points() -> dict[str, str]:
    """Python code running the ``effstats`` command as the console script does (pyproject's ``[project.scripts]``
    target, imported and called as the installer's wrapper calls it) and as ``python -m effstats`` does."""
    import tomllib

    module, function = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["effstats"].split(":")
    return {"console script": f"import sys; from {module} import {function}; sys.exit({function}())",
            "python -m": "import runpy; runpy.run_module('effstats', run_name='__main__', alter_sys=True)"}


@pytest.mark.parametrize("where", ["in the import", "in a weakref callback"])
@pytest.mark.parametrize("module", ["effstats.cli", "argparse"])
@pytest.mark.parametrize("entry", ["console script", "python -m"])
def test_ctrl_c_while_the_command_line_loads_prints_one_line(tmp_path, entry, module, where):
    # a Ctrl-C the moment the command line's modules start to load (effstats.cli, or argparse within it), raised by
    # an import hook so that it lands there on every run: in the import itself, or in a weakref callback as
    # importlib's module locks run them (Python prints such a one as "Exception ignored" and goes on)
    raise_it = ("            raise KeyboardInterrupt\n" if where == "in the import" else
                "            import weakref\n"
                "            def stop(_):\n"
                "                raise KeyboardInterrupt\n"
                "            lock = type('Lock', (), {})()\n"
                "            ref = weakref.ref(lock, stop)\n"
                "            del lock\n")
    hook = ("import sys\n"
            "class Interrupt:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name == {module!r}:\n"
            + raise_it +
            "sys.meta_path.insert(0, Interrupt())\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", hook + _entry_points()[entry], "audit", "board.csv", "--out",
                        str(tmp_path / "o")], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert (r.returncode, r.stderr.splitlines()) == (130, [INTERRUPTED_LINE]), r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("where", ["while the command line loads", "in the command"])
def test_ctrl_c_in_code_a_string_exec_runs_ends_python_m_with_status_130(tmp_path, where):
    # a Ctrl-C landing in code that a string exec() runs (the methods namedtuple and dataclasses generate as a module
    # loads): CPython marks it unhandled though the command catches it, and a real `python -m` (not runpy under -c)
    # then ends by SIGINT unless the mark is cleared
    stop = 'exec("raise KeyboardInterrupt", {})'
    hook = ("import sys\n"
            "class Interrupt:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'effstats.cli':\n"
            f"            {stop}\n"
            "sys.meta_path.insert(0, Interrupt())\n" if where == "while the command line loads" else
            "import effstats.cli\n"
            f"effstats.cli._main = lambda argv: {stop}\n")
    (tmp_path / "interrupted_in_exec.py").write_text(
        hook + "import runpy\nrunpy.run_module('effstats', run_name='__main__', alter_sys=True)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    r = subprocess.run([sys.executable, "-m", "interrupted_in_exec", "audit", "board.csv", "--out",
                        str(tmp_path / "o")], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert (r.returncode, r.stderr.splitlines()) == (130, [INTERRUPTED_LINE]), r.stderr


@pytest.mark.parametrize("entry", ["console script", "python -m"])
def test_ctrl_c_in_a_constructor_ends_with_the_one_line_not_the_half_built_objects_reports(tmp_path, entry):
    # a Ctrl-C inside tqdm's constructor, before it sets the attribute its finalizer reads: Python reports the
    # finalizer's AttributeError as "Exception ignored" when the half-built bar is freed, after the command's line
    board = tmp_path / "board.csv"
    rng = np.random.default_rng(0)
    x = np.clip(np.linspace(0.85, 0.3, 30)[:, None] + rng.normal(0, 0.05, (30, 6)), 0, 1).round(3)
    pd.DataFrame(x, index=pd.Index([f"m{i}" for i in range(30)], name="model")).add_prefix("T").to_csv(board)
    hook = ("import tqdm.std\n"
            "def stop(self, *args, **kwargs):\n"
            "    raise KeyboardInterrupt\n"
            "tqdm.std.tqdm.__init__ = stop\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", hook + _entry_points()[entry], "audit", str(board), "--out",
                        str(tmp_path / "o"), "--n-boot", "20"], capture_output=True, text=True, env=env, timeout=120)
    assert (r.returncode, r.stderr.splitlines()) == (130, [INTERRUPTED_LINE]), r.stderr
    # the same report of a command that is not interrupted is printed, once it ends
    hook = ("class Bar:\n"
            "    def __del__(self):\n"
            "        raise AttributeError('disable')\n"
            "import tqdm.std\n"
            "start = tqdm.std.tqdm.__init__\n"
            "def half(self, *args, **kwargs):\n"
            "    Bar()\n"
            "    start(self, *args, **kwargs)\n"
            "tqdm.std.tqdm.__init__ = half\n")
    r = subprocess.run([sys.executable, "-c", hook + _entry_points()[entry], "audit", str(board), "--out",
                        str(tmp_path / "p"), "--n-boot", "20", "--no-progress"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0 and r.stderr.count("Exception ignored") >= 1 and "AttributeError: disable" in r.stderr
    assert r.stdout.strip().endswith("report.md")


@pytest.mark.parametrize("entry", ["console script", "python -m"])
def test_ctrl_c_early_in_the_start_up_prints_no_traceback_of_the_command(tmp_path, entry):
    """SIGINT at delays from Python's start-up to the audit's resampling: the command's line and exit status 130
    once its entry point runs. Before that, Python's own start-up (its site, its runner, the package's light
    ``__init__`` and entry module) ends as Python ends it: killed by the signal, a traceback through those files
    only, or the interrupt dropped in importlib's own code with "Exception ignored" and the command run to its end."""
    import re
    import signal
    import time

    board = tmp_path / "board.csv"
    rng = np.random.default_rng(0)
    x = np.clip(np.linspace(0.85, 0.3, 80)[:, None] + rng.normal(0, 0.05, (80, 40)), 0, 1).round(3)
    pd.DataFrame(x, index=pd.Index([f"m{i}" for i in range(80)], name="model")).add_prefix("T").to_csv(board)
    package = Path(effstats.__file__).parent
    loading = {str(package / f) for f in ("__init__.py", "__main__.py", "_entry.py")}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    lines = 0
    for k, delay in enumerate((0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 1.0)):
        p = subprocess.Popen([sys.executable, "-c", _entry_points()[entry], "audit", str(board), "--out",
                              str(tmp_path / f"o{k}"), "--n-boot", "100000", "--no-progress"], stderr=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, text=True, env=env)
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        if p.returncode == 130 and err.splitlines() == [INTERRUPTED_LINE]:
            lines += 1
            continue
        files = re.findall(r'^  File "([^"]+)"', err, re.M)
        if p.returncode == 0:
            # dropped by Python in one of importlib's callbacks before the entry point (after it, the entry point
            # keeps such a one): the command runs to its end
            assert "Exception ignored" in err and err.rstrip().endswith("KeyboardInterrupt"), (delay, err)
            assert files and all(f.startswith("<frozen ") for f in files), (delay, err)
            continue
        assert p.returncode in (1, -signal.SIGINT), (delay, err)
        assert all(not f.startswith(str(package)) or f in loading for f in files), (delay, err)
    assert lines and p.returncode == 130  # the last, a second in: the command's line



def test_a_command_started_with_ctrl_c_ignored_runs_to_its_end_whenever_it_comes(tmp_path):
    """A command started with SIGINT ignored (a shell's background job, nohup) is not ended by a Ctrl-C sent to it at
    any moment: while its modules load, while it reads, while it writes. An ignored signal leaves nothing behind in
    the process, so one process takes the Ctrl-C at every moment after its start, each moment as a process of its
    own would take it."""
    import signal
    import time

    board = tmp_path / "board.csv"
    d = simulate_responses(30, 60, rng=0)
    ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(30)]).to_long()[["model", "item", "score"]].to_csv(
        board, index=False)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.Popen([sys.executable, "-c", _entry_points()["console script"], "select", str(board), "--budget",
                          "10", "--method", "random", "--no-progress", "--out", str(tmp_path / "s")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    started, running = time.monotonic(), 0
    for delay in (0.05, 0.1, 0.2, 0.3, 0.4, 0.6, 0.9):
        time.sleep(max(0.0, started + delay - time.monotonic()))
        running += p.poll() is None
        p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0 and "interrupted" not in err, (p.returncode, err)
    assert (tmp_path / "s" / "manifest.json").is_file()
    assert running >= 3  # the signals came while the command ran

def test_wide_table_model_column_and_metadata(tmp_path):
    p = tmp_path / "w.tsv"
    p.write_text("T\tModel\tAverage\tA\tB\n🟢\tx\t0.2\t0.1\t0.3\n🔶\ty\t0.5\t0.4\t0.6\n🟢\tz\t0.3\t-\t0.3\n")
    wide, pub = read_scores(p)
    assert list(wide.columns) == ["A", "B"] and list(wide.index) == ["x", "y", "z"]
    assert pub.tolist() == [0.2, 0.5, 0.3]
    assert R.mean_win_rate(wide).idxmax() == "y"


# ----------------------------------------------------------------------------- real leaderboards
def _one_line_error(capsys, match: str) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and match in err, err
    return err


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--score", "nope"], "--score: column 'nope'"),
        (["--model", "nope"], "--model: column 'nope'"),
        (["--seed", "-1"], "--seed"),
        (["--scenarios", "S0,zzz"], "--scenarios: unknown column(s) ['zzz']"),
        (["--exclude", "zzz"], "--exclude"),
        (["--aggregate", "median"], "--aggregate"),
        (["--n-boot", "x"], "--n-boot"),
        (["--table", "x"], "--table: applies to a HELM groups JSON (the title of the table to audit), not to table"),
    ],
)
def test_bad_arguments_one_line_exit_2(wide_table, tmp_path, capsys, extra, match):
    assert main(["audit", str(wide_table), "--out", str(tmp_path / "o"), "--no-progress", *extra]) == 2
    _one_line_error(capsys, match)


def test_out_existing_file_or_unwritable(wide_table, tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert main(["audit", str(wide_table), "--out", str(f), "--no-progress"]) == 2
    _one_line_error(capsys, "--out: ")
    assert main(["audit", str(wide_table), "--out", "/proc/effstats_report", "--no-progress"]) == 2
    _one_line_error(capsys, "--out: cannot write")


def test_duplicate_columns_percent_cells_and_metadata(tmp_path, capsys):
    p = tmp_path / "dup.csv"
    p.write_text("model,s1,s1,s2\na,0.1,0.2,0.3\nb,0.3,0.4,0.5\n")
    assert main(["audit", str(p), "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    _one_line_error(capsys, "duplicate column names ['s1']")
    # percentages become fractions; a numeric "Parameters" column is metadata, not a scenario
    rng = np.random.default_rng(0)
    x = np.clip(np.linspace(0.3, 0.8, 7)[:, None] + rng.normal(0, 0.05, (7, 4)), 0, 1).round(3)
    df = pd.DataFrame({"Model": [f"m{i}" for i in range(7)], "Parameters": np.arange(7) * 7e9,
                       **{f"T{j}": [f"{v * 100:.1f}%" for v in x[:, j]] for j in range(4)}})
    p = tmp_path / "pct.csv"
    df.to_csv(p, index=False)
    wide, _ = read_scores(p)
    assert list(wide.columns) == ["T0", "T1", "T2", "T3"]
    np.testing.assert_allclose(wide.astype(float).to_numpy(), x.round(3), atol=5e-4)
    out = tmp_path / "pct"
    assert main(["audit", str(p), "--out", str(out), "--n-boot", "40", "--no-progress", "--aggregate", "mean"]) == 0
    md = (out / "report.md").read_text()
    assert "Score columns: T0, T1, T2, T3." in md and "mean score" in md
    p.write_text("model,s1,s2\na,50%,0.3\nb,0.4,0.5\n")
    assert main(["audit", str(p), "--out", str(tmp_path / "o2"), "--no-progress"]) == 2
    _one_line_error(capsys, "mixes percentages")


def test_scenarios_and_exclude_select_columns(wide_table, tmp_path):
    out = tmp_path / "sel"
    assert main(["audit", str(wide_table), "--out", str(out), "--n-boot", "30", "--no-progress",
                 "--scenarios", "S0,S1,S2"]) == 0
    assert _audited(out) == ([f"model{i}" for i in range(8)], ["S0", "S1", "S2"])
    out = tmp_path / "exc"
    assert main(["audit", str(wide_table), "--out", str(out), "--n-boot", "30", "--no-progress",
                 "--exclude", "S5"]) == 0
    assert _audited(out)[1] == ["S0", "S1", "S2", "S3", "S4"]


def test_disconnected_leaderboards_refused(tmp_path, capsys):
    p = tmp_path / "two.csv"
    p.write_text("model,codeA,codeB\na,0.1,-\nb,0.2,-\nc,-,0.3\nd,-,0.4\n")
    assert main(["audit", str(p), "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    _one_line_error(capsys, "SCORES: the models form 2 groups that share no scenario")


def test_openllm_table_mean_aggregate_matches_published_average(tmp_path):
    from effstats.datasets.leaderboards import _raw  # bundled Open LLM Leaderboard v1 table

    p = tmp_path / "openllm.tsv"
    p.write_bytes(_raw("openllm/leaderboard.tsv"))
    out = tmp_path / "ol"
    assert main(["audit", str(p), "--out", str(out), "--n-boot", "60", "--no-progress", "--aggregate", "mean"]) == 0
    md = (out / "report.md").read_text()
    assert "13 model(s) appear in more than one row" in md
    assert "ARC, HellaSwag, MMLU, TruthfulQA, Winogrande, GSM8K" in md
    # the published "Average" (percent, rescaled with the tasks) is the mean of the six tasks: compared as a mean
    assert "Recomputed mean score vs the published aggregate 'Average'" in md
    tab = pd.read_csv(out / "scores.csv")
    assert (tab["mean"] - tab["published"]).abs().max() < 1e-4  # 2 printed decimals of percent
    html = (out / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "<img src='rank_intervals.png'" in html and "<table>" in html
    assert "## What to do" in md and "Resolved rank differences" in md
    assert (out / "rank_intervals.png").read_bytes()[:8] == PNG


def test_helm_json_reader(tmp_path):
    """HELM's helm-summarize writes groups/<group>.json: a list of tables with header cells and rows of cells."""
    import json

    rng = np.random.default_rng(4)
    models = [f"model {i}" for i in range(6)]
    acc = rng.random((6, 3)).round(3)
    tables = [{"title": "Accuracy",
               "header": [{"value": "Model/adapter"}, {"value": "Mean win rate", "lower_is_better": False},
                          {"value": "A - EM", "lower_is_better": False}, {"value": "B - EM", "lower_is_better": False},
                          {"value": "C - ECE", "lower_is_better": True}],
               "rows": [[{"value": m}, {"value": None}] + [{"value": float(v), "description": ""} for v in row]
                        for m, row in zip(models, acc)]},
              {"title": "Efficiency", "header": [{"value": "Model/adapter"}, {"value": "x"}], "rows": []}]
    tables[0]["rows"][0][3] = {"value": None}  # not evaluated
    p = tmp_path / "core_scenarios.json"
    p.write_text(json.dumps(tables))
    from effstats.cli import read_helm_json

    wide, pub = read_helm_json(p)
    assert list(wide.columns) == ["A - EM", "B - EM", "C - ECE"] and list(wide.index) == models
    np.testing.assert_allclose(wide["C - ECE"], -acc[:, 2])  # lower is better: negated
    assert np.isnan(wide.loc["model 0", "B - EM"])
    out = tmp_path / "h"
    assert main(["audit", str(p), "--out", str(out), "--n-boot", "30", "--no-progress", "--ties", "half"]) == 0
    models, scenarios = _audited(out)
    assert (len(models), scenarios) == (6, ["A - EM", "B - EM", "C - ECE"])
    with pytest.raises(ValueError, match="--table"):
        read_helm_json(p, table="nope")


def test_openllm_results_json_reader(tmp_path):
    """Open LLM Leaderboard results files (lm-evaluation-harness layout), one per model, MMLU subjects averaged."""
    import json

    rng = np.random.default_rng(5)
    folder = tmp_path / "results"
    want = {}
    for i in range(5):
        subj = rng.random(3)
        res = {"harness|arc:challenge|25": {"acc": 0.1, "acc_norm": 0.5 + i / 20, "acc_norm_stderr": 0.01},
               "harness|hellaswag|10": {"acc": 0.2, "acc_norm": 0.6 + i / 30},
               "harness|truthfulqa:mc|0": {"mc1": 0.3, "mc2": 0.4 + i / 40},
               "harness|winogrande|5": {"acc": 0.7},
               "harness|gsm8k|5": {"acc": i / 10},
               "all": {"acc": 0.5}}
        for j, v in enumerate(subj):
            res[f"harness|hendrycksTest-subject{j}|5"] = {"acc": float(v), "acc_norm": 0.0}
        d = folder / f"org/model{i}"
        d.mkdir(parents=True)
        (d / "results_2024-01-01.json").write_text(json.dumps({"config_general": {"model_name": f"org/model{i}"},
                                                               "results": res}))
        want[f"org/model{i}"] = (0.5 + i / 20, subj.mean(), 0.4 + i / 40)
    from effstats.cli import read_openllm_json

    wide = read_openllm_json(folder)
    assert set(wide.columns) == {"ARC", "HellaSwag", "TruthfulQA", "Winogrande", "GSM8K", "MMLU"}
    for m, (arc, mmlu, tqa) in want.items():
        assert wide.loc[m, "ARC"] == arc and wide.loc[m, "MMLU"] == pytest.approx(mmlu)
        assert wide.loc[m, "TruthfulQA"] == tqa
    out = tmp_path / "ol"
    assert main(["audit", str(folder), "--out", str(out), "--n-boot", "30", "--no-progress", "--aggregate", "mean",
                 "--exclude", "Winogrande"]) == 0
    models, scenarios = _audited(out)
    assert models == sorted(want) and scenarios == ["ARC", "GSM8K", "HellaSwag", "MMLU", "TruthfulQA"]


def test_real_table_layouts_saved_index_model_name_and_duplicate_hint(tmp_path, capsys):
    """A saved pandas index (unnamed first column), a ``model_name`` column, an ``average_score`` aggregate and a text
    column are handled; duplicated model names point to a unique column."""
    p = tmp_path / "m.tsv"
    p.write_text("\tmodel_name\trun\taverage_score\ta\tb\tc\n0\tx\tr1\t0.5\t0.4\t0.6\t0.5\n"
                 "1\ty\tr2\t0.3\t0.2\t0.4\t0.3\n"
                 "2\tz\tr3\t0.4\t0.5\t0.3\t0.4\n")
    wide, pub = read_scores(p)
    assert list(wide.index) == ["x", "y", "z"] and list(wide.columns) == ["a", "b", "c"]
    assert pub.tolist() == [0.5, 0.3, 0.4] and pub.attrs["kind"] == "mean"
    p2 = tmp_path / "d.tsv"
    p2.write_text("Weight\tModel\tGFLOPS\ta\tb\nw1\tvit\t10\t0.1\t0.2\nw2\tvit\t12\t0.3\t0.4\nw3\tres\t5\t0.2\t0.1\n")
    # repeated models are refused on request; so are they by default, since the unique 'Weight' tells their rows
    # apart (distinct entries, not resubmissions); --duplicates last keeps the last row, with the same hint on stderr
    assert main(["audit", str(p2), "--out", str(tmp_path / "o"), "--no-progress", "--duplicates", "error"]) == 2
    _one_line_error(capsys, "column 'Weight' is unique: pass --model 'Weight'")
    assert main(["audit", str(p2), "--out", str(tmp_path / "o"), "--no-progress", "--n-boot", "20"]) == 2
    _one_line_error(capsys, "pass --model 'Weight' to audit every row, or --duplicates last")
    assert main(["audit", str(p2), "--out", str(tmp_path / "o"), "--no-progress", "--n-boot", "20",
                 "--duplicates", "last"]) == 0
    assert "column 'Weight' is unique: pass --model 'Weight'" in capsys.readouterr().err
    wide, _ = read_scores(p2, model="Weight", explicit=["--model"])
    assert list(wide.columns) == ["a", "b"]  # Model is text, GFLOPS is numeric metadata


def _leaderboard(tmp_path, extra: dict, n: int = 8, k: int = 4, seed: int = 0) -> tuple[Path, np.ndarray]:
    """A wide leaderboard (rows in published order: best first) with extra columns inserted before the scores."""
    rng = np.random.default_rng(seed)
    x = np.clip(np.linspace(0.8, 0.3, n)[:, None] + rng.normal(0, 0.03, (n, k)), 0, 1).round(3)
    df = pd.DataFrame({"Model": [f"m{i}" for i in range(n)], **{c: f(n) for c, f in extra.items()},
                       **{f"T{j}": x[:, j] for j in range(k)}})
    p = tmp_path / "lb.tsv"
    df.to_csv(p, sep="\t", index=False)
    return p, x


def test_rank_score_and_efficiency_columns_are_not_scored(tmp_path):
    """SuperGLUE / BBH / bigcode / MTEB layouts: 'Rank' (lower is better) scored as a scenario would invert part of
    the ranking; GLUE's 'Score' and bigcode's 'Win' are published aggregates; 'Throughput', 'Max Tokens',
    'Embedding Dimensions' describe the model, not its quality. All are left out, and the report says so."""
    extra = {"Rank": lambda n: np.arange(1, n + 1), "Score": lambda n: np.linspace(90, 60, n),
             "Throughput": lambda n: np.arange(n) * 10.0, "Max Tokens": lambda n: [512] * n,
             "Embedding Dimensions": lambda n: [1024] * n, "URL": lambda n: [""] * n,
             "CB": lambda n: [f"{90 - i}.0/{80 - i}.5" for i in range(n)]}
    p, x = _leaderboard(tmp_path, extra)
    wide, published = read_scores(p)
    assert list(wide.columns) == ["T0", "T1", "T2", "T3"]
    np.testing.assert_allclose(published.to_numpy(), np.linspace(90, 60, 8))
    note = wide.attrs["note"]
    assert "'Score'" in note and "'Rank'" in note and "'Throughput'" in note
    # 'a/b' cells are read as the mean of the two (85.25 at most), then left out as off the scores' scale
    assert "in 'CB' are read as their mean" in note and "'CB' (values up to 85.25" in note


def test_task_names_containing_metadata_words_are_scored(tmp_path):
    """BBH's 'Date Understanding' and 'Geometric Shapes' are tasks, although their names contain metadata words
    ('date', 'sha'); a 'Release date' column is metadata."""
    extra = {"Date Understanding": lambda n: np.linspace(0.9, 0.4, n), "Geometric Shapes": lambda n: np.linspace(
        0.7, 0.2, n), "Release date": lambda n: np.arange(n) + 2020}
    p, _ = _leaderboard(tmp_path, extra)
    wide, _ = read_scores(p)
    assert {"Date Understanding", "Geometric Shapes"} <= set(wide.columns) and "Release date" not in wide.columns


def test_header_one_name_short_reads_model_names(tmp_path):
    """VTAB's table: the header lacks the model column's name, so pandas reads the names as an index and the
    first named column (the mean score) as model names; the reader realigns the header."""
    p = tmp_path / "vtab.tsv"
    p.write_text("Mean\tA\tB\tC\nnetX\t0.9\t0.8\t1.0\t0.9\nnetY\t0.5\t0.4\t0.6\t0.5\nnetZ\t0.7\t0.7\t0.7\t0.7\n")
    wide, published = read_scores(p)
    assert list(wide.index) == ["netX", "netY", "netZ"] and list(wide.columns) == ["A", "B", "C"]
    np.testing.assert_allclose(published.to_numpy(), [0.9, 0.5, 0.7])
    assert "one column fewer" in wide.attrs["note"]



@pytest.mark.parametrize("name, layout", [("model", "wide"), ("Model", "wide"), ("model", "long")])
def test_a_separator_ending_every_row_reads_as_the_table_without_it(tmp_path, name, layout):
    rows = {"wide": [f"{name},A,B,C", "netX,0.9,0.8,1.0", "netY,0.5,0.4,0.6", "netZ,0.7,0.7,0.2"],
            "long": [f"{name},scenario,score", "netX,A,0.9", "netX,B,0.8", "netY,A,0.5", "netY,B,0.4", "netZ,A,0.7",
                     "netZ,B,0.2"]}[layout]
    (tmp_path / "clean.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "ending.csv").write_text("\n".join(rows[:1] + [r + "," for r in rows[1:]]) + "\n")
    (want, _), (got, _) = read_scores(tmp_path / "clean.csv"), read_scores(tmp_path / "ending.csv")
    assert list(got.index) == ["netX", "netY", "netZ"] and got.shape == (3, 3 if layout == "wide" else 2)
    pd.testing.assert_frame_equal(got, want)


def test_partly_non_numeric_column_names_the_way_out(tmp_path, capsys):
    p, _ = _leaderboard(tmp_path, {"Extra": lambda n: ["pending"] + [0.5] * (n - 1)})
    assert main(["audit", str(p), "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    err = _one_line_error(capsys, "column 'Extra' holds 'pending', not a number ('-' or empty for not evaluated)")
    assert "(line 2, model " in err and err.endswith("leave the column out with --exclude 'Extra'")


def test_report_recommendations_are_consistent(tmp_path):
    """Report text a maintainer acts on: integer rank intervals, no 'drop' advice that leaves a model unscored or a
    one-scenario benchmark, no 'review' list naming most of the scenarios, a warning for few resamples, and the
    one-group case said in words."""
    # two scenarios, model B only on s2: dropping s2 would leave B unscored
    p = tmp_path / "two.csv"
    p.write_text("model,s1,s2\nA,0.6,0.5\nB,-,0.5\nC,0.2,0.4\nD,0.95,0.85\n")
    out = tmp_path / "o1"
    assert main(["audit", str(p), "--out", str(out), "--n-boot", "100", "--no-progress"]) == 0
    md = (out / "report.md").read_text()
    assert "Candidates to drop" not in md and "too few" in md
    tab = pd.read_csv(out / "scores.csv")
    assert (tab.rank_low == tab.rank_low.round()).all() and (tab.rank_high == tab.rank_high.round()).all()
    sc = pd.read_csv(out / "scenarios.csv").set_index("scenario")
    assert sc.loc["s2", "only_scenario_of"] == 1 and sc.loc["s1", "only_scenario_of"] == 0
    # scenarios that all disagree (independent random scores): one statement, not a list of most scenarios
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.random((12, 5)).round(3), index=[f"m{i}" for i in range(12)],
                      columns=[f"S{j}" for j in range(5)])
    df.index.name = "model"
    p = tmp_path / "noise.csv"
    df.to_csv(p)
    out = tmp_path / "o2"
    assert main(["audit", str(p), "--out", str(out), "--n-boot", "200", "--no-progress"]) == 0
    md = (out / "report.md").read_text()
    sc = pd.read_csv(out / "scenarios.csv")
    assert (sc.tau_with_rest < 0.3).sum() > 2.5  # the premise: most scenarios disagree with the rest
    assert "Scenarios disagree broadly" in md and "Review or report separately" not in md
    assert "too few" not in md
    assert "splits into 1 groups" not in md


def test_leader_group_is_not_a_chain_of_unresolved_neighbours(tmp_path):
    """HELM Lite: no adjacent pair is resolved, yet the leader beats the last model in every resample, so the
    ranking is not 'one group of statistically tied models'. The leader's group is the models it does not stay
    ahead of in >= 95% of the resamples."""
    rng = np.random.default_rng(1)
    x = np.linspace(0.9, 0.3, 25)[:, None] + rng.normal(0, 0.08, (25, 8))
    df = pd.DataFrame(x.round(4), index=[f"m{i:02d}" for i in range(25)], columns=[f"S{j}" for j in range(8)])
    df.index.name = "model"
    p = tmp_path / "chain.csv"
    df.to_csv(p)
    out = tmp_path / "o"
    assert main(["audit", str(p), "--out", str(out), "--n-boot", "300", "--no-progress"]) == 0
    md = (out / "report.md").read_text()
    tab = pd.read_csv(out / "scores.csv")
    assert (tab.p_ahead_of_next.dropna() < 0.95).mean() > 0.5  # the premise: most neighbours unresolved
    lead = tab.model.iloc[0]
    # brute force: how often the leader's MWR stays above each model's over the resampled scenario sets, each set a
    # table of its own (its columns as an array: as a frame, each would first be searched for aggregate columns)
    r = np.random.default_rng(0)
    boots = [pd.Series(R.mean_win_rate(df.to_numpy()[:, r.integers(0, 8, 8)]), index=df.index) for _ in range(300)]
    p_bf = pd.DataFrame([((b[lead] > b) + 0.5 * (b[lead] == b)) for b in boots]).mean()
    assert p_bf[tab.model.iloc[-1]] == 1.0 and tab.p_leader_ahead.iloc[-1] == 1.0
    assert np.isnan(tab.p_leader_ahead.iloc[0]) and p_bf[lead] == 0.5  # no comparison with itself, not 0.5
    group = tab.model[tab.p_leader_ahead < 0.95].tolist()
    assert 0 < len(group) < 9 and lead not in group and all(p_bf[m] < 0.99 for m in group)
    np.testing.assert_allclose(tab.p_leader_ahead.iloc[1:], p_bf[tab.model.iloc[1:]], atol=1e-12)
    assert "statistically tied" not in md and "no resolved difference inside" not in md
    assert f"stays ahead in fewer than 95% of the resamples of {len(group)} model(s)" in md
    assert md.split(f"| {lead} |")[1].splitlines()[0].rstrip(" |").endswith("—")


def test_lower_is_better_columns_and_unscored_models(tmp_path):
    """HEIM marks lower-is-better columns with '↓' (NSFW fraction): read as scores they would invert the ranking.
    HELM's efficiency table has models never timed. '↓' columns are negated and unscored models are left out, and
    the note says both."""
    x = np.array([[0.01, 0.00, 0.02], [0.05, 0.04, 0.03], [0.20, 0.10, 0.30], [np.nan] * 3])
    df = pd.DataFrame(x, index=["safe", "mid", "unsafe", "untested"], columns=[f"S{j} - NSFW frac ↓" for j in range(3)])
    df.insert(0, "Mean win rate ↑", [1.0, 0.5, 0.0, np.nan])
    df.index.name = "Model/adapter"
    p = tmp_path / "nsfw.tsv"
    df.to_csv(p, sep="\t", na_rep="-")
    wide, published = read_scores(p)
    assert list(wide.index) == ["safe", "mid", "unsafe"]
    np.testing.assert_allclose(wide.to_numpy(dtype=float), -x[:3])
    np.testing.assert_allclose(R.mean_win_rate(wide).to_numpy(), [1.0, 0.5, 0.0])  # the published ranking
    assert "1 model(s) with no score (untested)" in wide.attrs["note"] and "negated" in wide.attrs["note"]


def test_report_warns_when_the_table_does_not_reproduce_its_leaderboard(tmp_path):
    """Lower-is-better columns without a marker (HELM's inference times): the recomputed ranking runs against the
    published one; the report says so first instead of auditing the inverted leaderboard silently."""
    t = np.linspace(0.1, 0.9, 6)[:, None] + np.random.default_rng(0).normal(0, 0.01, (6, 4))  # seconds: lower is better
    df = pd.DataFrame(t.round(3), index=[f"m{i}" for i in range(6)], columns=[f"S{j} - time (s)" for j in range(4)])
    df.insert(0, "Mean win rate", np.linspace(1, 0, 6).round(3))  # fastest first
    df.index.name = "Model"
    p = tmp_path / "eff.tsv"
    df.to_csv(p, sep="\t")
    out = tmp_path / "o"
    assert main(["audit", str(p), "--out", str(out), "--n-boot", "200", "--no-progress"]) == 0
    md = (out / "report.md").read_text()
    todo = md.split("## What to do")[1].split("##")[0].strip().splitlines()
    assert todo[0].startswith("- **Check the input first**") and "τ -1.00" in todo[0]


def test_default_aggregate_follows_the_published_column(tmp_path):
    """A leaderboard ranked by its 'Average' (Open LLM, BBH, GLUE's 'Score') is audited as a ranking by the mean
    score, the ranking its maintainer publishes; with a 'Mean win rate' column (HELM) or none, by MWR."""
    p, x = _leaderboard(tmp_path, {"Average": lambda n: np.linspace(80, 30, n)})
    out = tmp_path / "avg"
    assert main(["audit", str(p), "--out", str(out), "--n-boot", "50", "--no-progress"]) == 0
    md = (out / "report.md").read_text()
    assert "Models ranked by the **mean score**" in md
    tab = pd.read_csv(out / "scores.csv").set_index("model")
    np.testing.assert_allclose(tab["mean"].to_numpy(), x.mean(1)[np.argsort(-x.mean(1))], rtol=0, atol=1e-12)
    out = tmp_path / "mwr"
    assert main(["audit", str(p), "--out", str(out), "--n-boot", "50", "--no-progress", "--aggregate", "mwr"]) == 0
    assert "Models ranked by the **Mean Win Rate**" in (out / "report.md").read_text()
    p2, _ = _leaderboard(tmp_path, {})
    out = tmp_path / "none"
    assert main(["audit", str(p2), "--out", str(out), "--n-boot", "50", "--no-progress"]) == 0
    assert "Models ranked by the **Mean Win Rate**" in (out / "report.md").read_text()


def test_report_flags_mixed_scales_under_a_mean(tmp_path, capsys):
    """One column on a wider scale among fractions: the mean follows that column alone (A first although it is last
    or third on the other two); the report says so, and suggests the scale-free win rate. No warning under MWR. A
    column in percent among fractions is refused for a mean, naming the columns."""
    p = tmp_path / "scale.csv"
    p.write_text("model,Average,a,b,c\nA,0.5,800,0.2,0.3\nB,0.4,700,0.9,0.8\nC,0.3,600,0.5,0.5\nD,0.2,500,0.1,0.2\n")
    out = tmp_path / "o"
    assert main(["audit", str(p), "--out", str(out), "--n-boot", "200", "--no-progress"]) == 0
    md = (out / "report.md").read_text()
    assert "**Scales differ**: the scores of a span more than 10×" in md
    assert "still rises by +0.000" not in md  # a flat curve is not 'still rising'
    out = tmp_path / "m"
    assert main(["audit", str(p), "--out", str(out), "--n-boot", "200", "--no-progress", "--aggregate", "mwr"]) == 0
    assert "Scales differ" not in (out / "report.md").read_text()
    capsys.readouterr()
    p.write_text("model,Average,a,b,c\nA,0.5,80,0.2,0.3\nB,0.4,70,0.9,0.8\nC,0.3,60,0.5,0.5\nD,0.2,50,0.1,0.2\n")
    assert main(["audit", str(p), "--out", str(tmp_path / "p"), "--n-boot", "200", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "column(s) 'a' lie in 0–100 while 'b', 'c' lie in [0, 1]" in err[0], err


def test_few_resamples_warned_once_in_the_report_not_as_python_warnings(tmp_path, capsys):
    p, _ = _leaderboard(tmp_path, {})
    out = tmp_path / "o"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no DegenerateDataWarning traceback lines on the terminal
        assert main(["audit", str(p), "--out", str(out), "--n-boot", "30", "--no-progress"]) == 0
    md = (out / "report.md").read_text()
    assert "30 bootstrap resamples are too few" in md and "the 2.5% tail holds 0.8 draws" in md


@pytest.mark.parametrize("command", [["audit"], ["select"], ["estimate"], ["sequential", "start"],
                                     ["sequential", "update"]])
def test_every_command_help_says_what_it_does(command, capsys):
    assert main([*command, "--help"]) == 0
    blocks = capsys.readouterr().out.split("\n\n")
    assert blocks[0].startswith("usage:") and len(blocks) > 2
    assert not blocks[1].lstrip().startswith(("positional arguments", "options")), blocks[1]


def test_version_is_the_package_version_and_workflow_loads_on_first_use(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"effstats {effstats.__version__}"
    assert "workflow" in dir(effstats)
    assert effstats.workflow.select is __import__("effstats.workflow", fromlist=["select"]).select


def test_duplicate_hint_never_suggests_a_column_of_timestamps(tmp_path, capsys):
    # an Open LLM details export: a model evaluated twice, its runs told apart by a timestamp column, which names
    # runs, not models
    p = tmp_path / "mmlu.tsv"
    p.write_text("model_name\tsplit_name\ta\tb\n"
                 "x\t2023-12-10T04-42-16.291896\t0.4\t0.6\nx\t2024-01-02T11-05-01.000001\t0.5\t0.6\n"
                 "y\t2023-11-01T00-00-00.5\t0.2\t0.4\nz\t2023-10-01 08:30:00\t0.5\t0.3\n")
    assert main(["audit", str(p), "--out", str(tmp_path / "o"), "--no-progress", "--duplicates", "error"]) == 2
    err = capsys.readouterr().err
    assert "appear in more than one row" in err and "split_name" not in err
    # a text column of names is still suggested
    p2 = tmp_path / "named.tsv"
    lines = p.read_text().splitlines()
    p2.write_text("\n".join([lines[0] + "\trun"] + [ln + f"\trun{i}" for i, ln in enumerate(lines[1:])]) + "\n")
    assert main(["audit", str(p2), "--out", str(tmp_path / "o2"), "--no-progress", "--duplicates", "error"]) == 2
    _one_line_error(capsys, "column 'run' is unique: pass --model 'run'")


def test_top_level_namespace_lists_the_api_and_submodules_only():
    """``dir(effstats)``: the public names (``__all__``), the submodules and the dunders; none of the module's own
    imports (``annotations``, ``TYPE_CHECKING``, ``importlib``), which are not attributes either."""
    public = {n for n in dir(effstats) if not n.startswith("_")}
    assert public == set(effstats.__all__) | {"datasets", "sequential", "sortsearch", "metrics", "disco", "irt",
                                              "reliability", "rbridge", "bitpack", "splits", "responses", "cli",
                                              "workflow"}
    for name in ("annotations", "TYPE_CHECKING", "importlib"):
        assert not hasattr(effstats, name)


@pytest.mark.parametrize("package", ["workflow", "datasets", "sequential", "sortsearch", "disco", "irt", "reliability"])
def test_subpackage_namespace_lists_no_module_level_imports(package):
    """``dir()`` of each subpackage: its public names and submodules; none of its own imports (``annotations``,
    ``TYPE_CHECKING``, ``importlib``)."""
    import importlib

    mod = importlib.import_module(f"effstats.{package}")
    public = {n for n in dir(mod) if not n.startswith("_")}
    assert set(mod.__all__) <= public
    assert not public & {"annotations", "TYPE_CHECKING", "importlib", "typing"}, public
    for name in public - set(mod.__all__):  # anything else listed is a submodule
        assert type(getattr(mod, name)).__name__ == "module", name


def test_audit_add_examples_advice_quotes_the_tables_row_of_every_example(tmp_path):
    # models of nearly equal accuracy on few examples: the ranking's DIoR stays below the target with every example
    rng = np.random.default_rng(5)
    n_models, n_items = 8, 30
    p = 0.6 + 0.01 * np.arange(n_models)
    df = pd.DataFrame({"model": np.repeat([f"m{i}" for i in range(n_models)], 3 * n_items),
                       "scenario": np.tile(np.repeat(["s1", "s2", "s3"], n_items), n_models),
                       "item": np.tile(np.arange(3 * n_items), n_models),
                       "score": (rng.random(3 * n_items * n_models) < np.repeat(p, 3 * n_items)).astype(int)})
    src = tmp_path / "long.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "rep"
    assert main(["audit", str(src), "--by", "scenario", "--out", str(out), "--n-boot", "60", "--no-progress"]) == 0
    md = (out / "report.md").read_text()
    curve = pd.read_csv(out / "efficiency_examples.csv")
    every = curve.loc[curve["size"].idxmax()]
    assert every["dior"] < 0.95
    line = next(x for x in md.splitlines() if "**Add examples**" in x)
    assert f"({every['dior']:.3f} at {int(every['size'])} examples per scenario" in line, line
