"""Every notebook in notebooks/ executes in FAST mode in the "effstats" kernel, shows its figures inline, saves them,
and writes a claims table (FIGURES/<stem>_claims.csv: claim, paper, ours, holds) whose every claim holds."""
import contextlib
import functools
import importlib.util
import io
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import nbformat
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    """scripts/<name>.py as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run_notebooks = _script("run_notebooks")

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# where the docs' build reads FAST-mode executed copies (scripts/docs_notebooks.py)
DOCS_COPIES = ROOT / "build" / "docs-notebooks"

# Each notebook runs in FAST mode once per session, through the runner's command line (run_notebooks.main, as
# `scripts/run_notebooks.py --fast --out DIR NAME`): test_notebook_executes checks the run, test_docs.py's site
# publishes the executed copy instead of running the notebook again through scripts/docs_notebooks.py, and
# test_reports.py renders tour's run and checks what the runner printed and wrote. The three modules are in the xdist
# group "notebooks", so that one worker holds the runs.
class FastRun(NamedTuple):
    """One FAST run: ``folder`` holds ``notebooks/`` (the executed copy and timings.csv) and ``figures/`` (the
    figures and claims); ``status``, ``stdout`` and ``stderr``: the runner's exit status and output."""
    folder: Path
    status: int
    stdout: str
    stderr: str


_FAST_RUNS: dict[Path, FastRun] = {}


def fast_run_record(path: Path, tmp_path_factory) -> FastRun:
    """The notebook's FAST run through the runner (once a session), whatever its outcome."""
    if path not in _FAST_RUNS:
        folder = tmp_path_factory.mktemp(f"fast-{path.stem}")
        out, err = io.StringIO(), io.StringIO()
        with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            mp.setenv("EFFSTATS_FIGURES", str(folder / "figures"))
            status = run_notebooks.main(["--fast", "--out", str(folder / "notebooks"), "--timeout", "900", path.stem])
        _FAST_RUNS[path] = FastRun(folder, status, out.getvalue(), err.getvalue())
    return _FAST_RUNS[path]


def fast_run(path: Path, tmp_path_factory) -> tuple[nbformat.NotebookNode, Path]:
    """The notebook executed in FAST mode (once a session) and the folder its figures and claims went to; raises,
    with the runner's report of the error, every time it is asked if the run failed."""
    run = fast_run_record(path, tmp_path_factory)
    if run.status != 0:
        # the runner's stderr: its error report (the failing cell's traceback), after its progress bar's lines
        report = "\n".join(line for line in run.stderr.split("\n") if "\r" not in line)
        raise RuntimeError(f"{path.name} failed in FAST mode (run_notebooks.py exit status {run.status}):\n"
                           f"{report[-4000:]}\n{run.stdout[-1000:]}")
    return nbformat.read(run.folder / "notebooks" / path.name, as_version=4), run.folder / "figures"


@functools.cache
def _predictions_missing() -> bool:
    """Whether the notebooks' kernel misses the released predictions (they live beside the checkout, not in the
    repository), looked up as the runner looks them up."""
    return run_notebooks.missing_data(fast=True) is not None


class _AskedAtSetUp:
    """A skipif condition asked when a test that carries it is set up (pytest takes its truth then), not when the
    module is collected: each worker collects every test, and the question costs a process or Jupyter's imports
    that only the workers running such a test need."""

    def __init__(self, question):
        self.question = question

    def __bool__(self) -> bool:
        return bool(self.question())


# the notebooks other than run_notebooks.NEEDS_NO_DATA read the released predictions, and the tour's claims check
# published numbers on them (without them those claims fail, saying so)
needs_data = pytest.mark.skipif(_AskedAtSetUp(_predictions_missing),
                                reason="shared/data/predictions not found beside the checkout")


@functools.cache
def _kernel_missing() -> bool:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(run_notebooks.KERNEL)
    except NoSuchKernel:
        return True
    return False


# the runner executes in the kernel make setup registers (the checkout's .venv); elsewhere it refuses, saying so
needs_kernel = pytest.mark.skipif(_AskedAtSetUp(_kernel_missing), reason=f"needs the {run_notebooks.KERNEL!r} "
                                  "Jupyter kernel, which make setup registers")


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"


def test_runner_sets_no_matplotlib_backend(monkeypatch):
    # figures must show inline: the kernel gets no MPLBACKEND even if the caller's environment has one
    monkeypatch.setenv("MPLBACKEND", "Agg")
    env = run_notebooks.kernel_env(fast=True)
    assert "MPLBACKEND" not in env and env["EFFSTATS_FAST"] == "1"
    assert run_notebooks.kernel_env(fast=False)["EFFSTATS_FAST"] == "0"


def test_a_fast_run_leaves_the_committed_figures_alone(monkeypatch):
    # FAST mode's figures and tables are not the full runs' that figures/ holds: elsewhere unless the caller says
    monkeypatch.delenv("EFFSTATS_FIGURES", raising=False)
    root = Path(run_notebooks.__file__).resolve().parents[1]
    assert Path(run_notebooks.kernel_env(fast=False)["EFFSTATS_FIGURES"]) == root / "figures"
    fast = Path(run_notebooks.kernel_env(fast=True)["EFFSTATS_FIGURES"])
    assert fast.is_absolute() and root / "figures" not in (fast, *fast.parents)
    monkeypatch.setenv("EFFSTATS_FIGURES", "/somewhere")
    assert run_notebooks.kernel_env(fast=True)["EFFSTATS_FIGURES"] == "/somewhere"


def test_docs_publish_only_executed_copies_that_ran_to_the_end(tmp_path, monkeypatch, capsys):
    # make docs takes make demo's full copies when newer than the notebook: a copy that ends in a traceback (a demo
    # run without the data) or that stopped half-way is passed over for a FAST run, saying so
    docs = _script("docs_notebooks")
    src, full, fast = tmp_path / "notebooks", tmp_path / "full", tmp_path / "fast"
    for d in (src, full, fast):
        d.mkdir()
    cells = [nbformat.v4.new_markdown_cell("# t"), nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell(""),
             nbformat.v4.new_code_cell("print(x)")]
    for name in ("ok", "error", "stopped", "unreadable"):
        nbformat.write(nbformat.v4.new_notebook(cells=cells), src / f"{name}.ipynb")
    ran = nbformat.v4.new_notebook(cells=[c.copy() for c in cells])
    ran.cells[1].execution_count, ran.cells[3].execution_count = 1, 2
    nbformat.write(ran, full / "ok.ipynb")
    nbformat.write(ran, fast / "error.ipynb")
    failed = nbformat.from_dict(ran)
    failed.cells[3].outputs = [nbformat.v4.new_output("error", ename="FileNotFoundError", evalue="x", traceback=[])]
    nbformat.write(failed, full / "error.ipynb")
    stopped = nbformat.from_dict(ran)
    stopped.cells[3].execution_count = None
    nbformat.write(stopped, full / "stopped.ipynb")
    (full / "unreadable.ipynb").write_text("{")
    monkeypatch.setattr(docs, "NOTEBOOKS", src)
    monkeypatch.setattr(docs, "FAST_COPIES", fast)
    monkeypatch.setenv("EFFSTATS_DOCS_NOTEBOOKS", str(full))
    chosen, to_run = docs.choose()
    assert chosen["ok"] == full / "ok.ipynb" and chosen["error"] == fast / "error.ipynb"
    assert sorted(to_run) == ["stopped", "unreadable"]
    out = capsys.readouterr().out
    assert "error.ipynb: code cell 3 ends in FileNotFoundError" in out
    assert "stopped.ipynb: code cell 3 never ran" in out and "unreadable.ipynb: unreadable" in out


def test_without_the_predictions_only_the_notebooks_that_need_none_run(tmp_path, monkeypatch, capsys):
    # make demo in a clone without the data: one line saying where to put them, and no notebook that reads them runs
    monkeypatch.setenv("EFFSTATS_DATA", str(tmp_path / "absent"))
    reading = sorted(p.stem for p in NOTEBOOKS if p.stem not in run_notebooks.NEEDS_NO_DATA)[:2]
    assert run_notebooks.main(["--out", str(tmp_path / "out"), *reading]) == 1
    out, err = capsys.readouterr()
    assert "executing" not in out and not list((tmp_path / "out").glob("*.ipynb"))
    assert err.splitlines()[0].startswith("predictions: NOT FOUND - make demo needs them") and "EFFSTATS_DATA" in err
    assert f"not running {', '.join(reading)} (they read the predictions)" in err


def test_predictions_found_are_looked_up_once_a_process(tmp_path, monkeypatch):
    # the tests' FAST runs call the runner once a notebook: a lookup that found the predictions (a process of its
    # own) is not repeated for the same EFFSTATS_DATA; one that did not find them is, as they may be put there
    import subprocess

    real, calls = subprocess.run, []
    monkeypatch.setattr(subprocess, "run", lambda *a, **kw: calls.append(a) or real(*a, **kw))
    monkeypatch.setattr(run_notebooks, "_DATA_FOUND", set())
    data = tmp_path / "data"
    monkeypatch.setenv("EFFSTATS_DATA", str(data))
    assert run_notebooks.missing_data(True).startswith("predictions: NOT FOUND")
    assert run_notebooks.missing_data(True).startswith("predictions: NOT FOUND") and len(calls) == 2
    data.mkdir()
    assert run_notebooks.missing_data(True) is None and len(calls) == 3
    assert run_notebooks.missing_data(True) is None and len(calls) == 3
    # another folder, or the full runs' environment, is looked up again
    assert run_notebooks.missing_data(False) is None and len(calls) == 4
    monkeypatch.setenv("EFFSTATS_DATA", str(tmp_path / "elsewhere"))
    assert run_notebooks.missing_data(True) is not None and len(calls) == 5


def test_docs_without_the_predictions_name_the_notebooks_that_read_them(tmp_path, monkeypatch, capsys):
    # make docs in a clone without the data: nothing failed, so the last line says which pages need the predictions
    # and where to put them, not that a notebook failed
    docs = _script("docs_notebooks")
    reading = sorted(p.stem for p in NOTEBOOKS if p.stem not in run_notebooks.NEEDS_NO_DATA)[:2]
    src, full, fast, staged = (tmp_path / d for d in ("notebooks", "full", "fast", "staged"))
    src.mkdir()
    for name in reading:
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), src / f"{name}.ipynb")
    monkeypatch.setattr(docs, "NOTEBOOKS", src)
    monkeypatch.setattr(docs, "FAST_COPIES", fast)
    monkeypatch.setattr(docs, "STAGED", staged)
    monkeypatch.setenv("EFFSTATS_DOCS_NOTEBOOKS", str(full))
    monkeypatch.setenv("EFFSTATS_DATA", str(tmp_path / "absent"))
    assert docs.main([]) == 1
    err = capsys.readouterr().err
    assert "failed to execute" not in err and not staged.exists()
    assert err.splitlines()[-1] == (
        f"docs: 2 notebooks ({', '.join(reading)}) read the released per-item predictions, which were not found: set "
        "EFFSTATS_DATA to their folder or put them in shared/data/predictions beside the checkout (README, Data); the "
        "site is not built without their pages")


def _procs(field: int, value: int) -> list[int]:
    """The processes whose /proc/PID/stat field ``field`` (after the name: 1 parent, 3 session) is ``value``."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[field]) == value:
                pids.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return pids


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.slow
def test_a_stopped_parallel_run_leaves_no_worker_or_kernel_behind(tmp_path):
    # make demo stopped (timeout, Ctrl-C of make: SIGTERM to the process group): the pool's workers and the kernels
    # they started (in sessions of their own) end with the runner
    import os
    import signal
    import subprocess
    import sys

    (tmp_path / "data").mkdir()
    env = {**os.environ, "EFFSTATS_DATA": str(tmp_path / "data"), "EFFSTATS_FIGURES": str(tmp_path / "figures")}
    names = [p.stem for p in NOTEBOOKS][:2]
    proc = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "run_notebooks.py"), "--fast", "--jobs", "2",
                             "--out", str(tmp_path / "out"), *names], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    started, kernels = time.monotonic(), []
    try:
        while time.monotonic() - started < 120 and len(_procs(1, proc.pid)) < 3:  # the tracker and two workers
            time.sleep(0.5)
        time.sleep(5)  # the workers start their kernels
        workers = _procs(1, proc.pid)
        kernels = [k for w in workers for k in _procs(1, w)]
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and [p for p in workers + kernels if _alive(p)]:
            time.sleep(0.5)
        left = [p for p in set(workers + kernels + _procs(3, proc.pid)) if _alive(p)]
    finally:
        for pid in _procs(3, proc.pid) + kernels:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    assert len(workers) >= 2 and not left, (workers, kernels, left, proc.stderr.read()[-2000:])


def test_summary_table_and_timings_csv(tmp_path):
    rows = [{"notebook": "a", "mode": "fast", "seconds": "61.5", "cpu_seconds": "40.0", "status": "ok",
             "finished_utc": "x"},
            {"notebook": "bb", "mode": "fast", "seconds": "2.0", "cpu_seconds": "1.5", "status": "error",
             "finished_utc": "y"}]
    table = run_notebooks.summary_table(rows)
    assert "1:01.5" in table and "0:02.0" in table and "0:40.0" in table and "error" in table
    assert table.splitlines()[-1].split() == ["total", "1:03.5", "0:41.5"]
    # a row of an older timings.csv has no CPU time: the table says it is unknown rather than count it as 0
    older = run_notebooks.summary_table([rows[0], {**rows[1], "cpu_seconds": ""}])
    assert older.splitlines()[-1].split() == ["total", "1:03.5", "0:40.0+?"]
    run_notebooks.write_timings(tmp_path, rows)
    # a later run of one notebook replaces its row and keeps the others
    run_notebooks.write_timings(tmp_path, [{**rows[0], "seconds": "5.0"}])
    t = pd.read_csv(tmp_path / "timings.csv")
    assert list(t.columns) == run_notebooks.TIMINGS_FIELDS
    assert dict(zip(t["notebook"], t["seconds"])) == {"a": 5.0, "bb": 2.0}
    assert dict(zip(t["notebook"], t["cpu_seconds"])) == {"a": 40.0, "bb": 1.5}


def test_help_says_what_fast_does_and_which_names_it_takes(capsys):
    with pytest.raises(SystemExit) as exit_:
        run_notebooks.main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert exit_.value.code == 0
    assert "fewer seeds, splits, models and items (EFFSTATS_FAST=1 in the kernel)" in out
    assert "with or without .ipynb" in out and "each rendered after its notebook ends" in out

@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_timings_csv_gets_the_umask_permissions(tmp_path, umask):
    old = os.umask(umask)
    try:
        run_notebooks.write_timings(tmp_path, [{"notebook": "tour", "mode": "fast", "seconds": "2.5",
                                                "cpu_seconds": "1.0", "status": "ok"}])
        (tmp_path / "tour.ipynb").write_text("{}")
    finally:
        os.umask(old)
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
    assert modes == {"timings.csv": 0o666 & ~umask, "tour.ipynb": 0o666 & ~umask}


@pytest.mark.parametrize("damaged", ["notebook,seconds\ntour,abc\n", "a,b\n1,2\n", "notebook,seconds\ntour\n",
                                     "notebook,seconds,cpu_seconds\ntour,3.0,-\n", "\x00\xff\xfe,\n"])
def test_damaged_timings_are_ignored_with_one_warning_and_rewritten(tmp_path, capsys, damaged):
    (tmp_path / "timings.csv").write_bytes(damaged.encode("latin-1"))
    assert run_notebooks.read_timings(tmp_path) == {}
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    row = {"notebook": "tour", "mode": "fast", "seconds": "2.5", "cpu_seconds": "1.0", "status": "ok"}
    run_notebooks.write_timings(tmp_path, [row])
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    t = pd.read_csv(tmp_path / "timings.csv")
    assert list(t.columns) == run_notebooks.TIMINGS_FIELDS and t["notebook"].tolist() == ["tour"]
    assert t["seconds"].tolist() == [2.5] and sorted(p.name for p in tmp_path.iterdir()) == ["timings.csv"]
    assert run_notebooks.read_timings(tmp_path)["tour"]["cpu_seconds"] == "1.0"
    assert capsys.readouterr().err == ""


def test_timings_of_other_columns_keep_their_usable_rows(tmp_path, capsys):
    (tmp_path / "timings.csv").write_text("notebook,seconds,extra\ntour,3.5,x\ndisco,n/a,y\n")
    got = run_notebooks.read_timings(tmp_path)
    assert list(got) == ["tour"] and got["tour"]["seconds"] == "3.5" and got["tour"]["cpu_seconds"] == ""
    assert "1 of 2 rows" in capsys.readouterr().err


def test_out_that_is_no_directory_is_refused_before_any_notebook_runs(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    for out in (tmp_path / "file", tmp_path / "file" / "below"):
        assert run_notebooks.main(["--fast", "--out", str(out), NOTEBOOKS[0].stem]) == 2
        out_, err = capsys.readouterr()
        assert out_ == "" and len(err.strip().splitlines()) == 1 and "--out" in err and str(out) in err


def test_a_timeout_below_one_second_is_refused_before_any_notebook_runs(capsys):
    with pytest.raises(SystemExit) as exc:
        run_notebooks.main(["--fast", "--timeout", "0", NOTEBOOKS[0].stem])
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == "" and "--timeout" in err.strip().splitlines()[-1]

def test_reports_without_nbconvert_are_refused_in_one_line_before_any_notebook_runs(tmp_path, monkeypatch, capsys):
    # make demo renders the reports as the notebooks end: where nbconvert cannot be imported (Debian 13's stack as
    # the tests see it) it says so in one line naming --reports before a notebook runs for nothing, and writes nothing
    monkeypatch.setitem(sys.modules, "nbconvert", None)  # `import nbconvert` raises ModuleNotFoundError
    out, reports = tmp_path / "out", tmp_path / "reports"
    assert run_notebooks.main(["--fast", "--out", str(out), "--reports", str(reports), NOTEBOOKS[0].stem]) == 2
    stdout, err = capsys.readouterr()
    assert stdout == "" and len(err.strip().splitlines()) == 1, err
    assert "error: --reports: cannot render: " in err and "nbconvert" in err and "Traceback" not in err
    assert not list(out.iterdir()) and not list(reports.iterdir())
    # the reports render executed copies: --reports without --out is refused as well
    with pytest.raises(SystemExit) as exc:
        run_notebooks.main(["--fast", "--reports", str(reports), NOTEBOOKS[0].stem])
    assert exc.value.code == 2 and "--reports: needs --out" in capsys.readouterr().err.strip().splitlines()[-1]


@needs_kernel
def test_reports_render_as_lanes_free_and_equal_render_reports(tmp_path):
    # make demo (--jobs 2 --reports): a finished notebook's page waits while both lanes run notebooks and is
    # rendered by the first lane with none left to start, beside the notebook still running; the pages are those
    # render_reports.py renders from the same executed copies afterwards, a failing notebook's too
    pytest.importorskip("nbconvert", reason="the HTML reports need nbconvert (python3-nbconvert)")
    rr = _script("render_reports")
    root = tmp_path / "tree"  # the runner and renderer in a tree of their own, with its own notebooks/
    (root / "scripts").mkdir(parents=True)
    for name in ("run_notebooks", "render_reports"):
        (root / "scripts" / f"{name}.py").write_bytes((ROOT / "scripts" / f"{name}.py").read_bytes())
    code = nbformat.v4.new_code_cell
    waits = ("import time, pathlib\n"
             "pages = [pathlib.Path('../reports') / f'{n}.html' for n in ('a', 'b')]\n"
             "t = time.monotonic()\n"
             "while not all(p.exists() for p in pages) and time.monotonic() - t < 240:\n"
             "    time.sleep(0.2)\n"
             "print('pages while running:', all(p.exists() for p in pages))")
    claims = ("import os, pathlib\n"
              "pathlib.Path(os.environ['EFFSTATS_FIGURES'], 'a_claims.csv').write_text("
              "'claim,paper,ours,holds\\nx,1,1,True\\ny,1,2,False\\n')")
    notebooks = {
        "long": [nbformat.v4.new_markdown_cell("# The long one"), code(waits)],
        "a": [nbformat.v4.new_markdown_cell("# Alpha\n\nThe error $E = |y - \\hat y|$."), code(claims)],
        "b": [code("import pathlib; print('a before b ended:', pathlib.Path('../reports/a.html').exists())"),
              code("1 / 0"), code("print('never')")],
    }
    (root / "notebooks").mkdir()
    for name, cells in notebooks.items():
        nbformat.write(nbformat.v4.new_notebook(cells=cells), root / "notebooks" / f"{name}.ipynb")
    # the last run's CPU seconds order the lanes: long first, then a and b one after the other in the second lane
    run_notebooks.write_timings(root / "out", [
        {"notebook": n, "mode": "fast", "seconds": c, "cpu_seconds": c, "status": "ok"}
        for n, c in (("long", "100.0"), ("a", "2.0"), ("b", "1.0"))])
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env.update(EFFSTATS_DATA=str(tmp_path), EFFSTATS_FIGURES=str(root / "figures"))
    proc = subprocess.run([sys.executable, str(root / "scripts" / "run_notebooks.py"), "--fast", "--jobs", "2",
                           "--out", str(root / "out"), "--reports", str(root / "reports")],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-3000:]  # b failed
    assert "ZeroDivisionError" in proc.stderr and "NOT rendered" not in proc.stderr, proc.stderr[-3000:]
    ran = {n: nbformat.read(root / "out" / f"{n}.ipynb", as_version=4) for n in notebooks}
    assert ran["b"].cells[0].outputs[0]["text"] == "a before b ended: False\n"  # both lanes busy: a's page waited
    assert ran["long"].cells[1].outputs[0]["text"] == "pages while running: True\n"  # then rendered beside long
    assert sorted(p.name for p in (root / "reports").iterdir()) == ["a.html", "b.html", "index.html", "long.html"]
    rr.render_all(root / "out", tmp_path / "again")
    for name in notebooks:
        assert (root / "reports" / f"{name}.html").read_bytes() == (tmp_path / "again" / f"{name}.html").read_bytes()
    index, again = ((d / "index.html").read_text().splitlines() for d in (root / "reports", tmp_path / "again"))
    rendered = [i for i, line in enumerate(index) if "Rendered " in line]
    assert len(rendered) == 1 and len(index) == len(again)
    assert [x for i, x in enumerate(index) if i not in rendered] == [y for i, y in enumerate(again)
                                                                     if i not in rendered]
    page_a = (root / "reports" / "a.html").read_text()
    assert "claims holding: 1 of 2" in page_a and "1 / 2 (0 not replicating)" in index[
        [i for i, line in enumerate(index) if 'href="a.html"' in line][0]]
    assert "ZeroDivisionError" in (root / "reports" / "b.html").read_text()


@needs_kernel
@pytest.mark.notebook
@pytest.mark.xdist_group("notebooks")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path_factory):
    if path.stem not in run_notebooks.NEEDS_NO_DATA and _predictions_missing():
        pytest.skip(f"{path.name} reads shared/data/predictions, not found beside the checkout")
    nb, figures = fast_run(path, tmp_path_factory)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors
    # figures show inline (no Agg backend) ...
    inline = [o for o in outputs if "image/png" in o.get("data", {})]
    assert inline, f"{path.name} shows no inline figure (image/png output)"
    # ... and are saved for the claims
    assert list(figures.glob("*.png")), f"{path.name} saved no figure to FIGURES"
    claims_csv = figures / f"{path.stem}_claims.csv"
    assert claims_csv.exists(), f"{path.name} wrote no claims table {claims_csv.name}"
    claims = pd.read_csv(claims_csv)
    assert list(claims.columns) == ["claim", "paper", "ours", "holds"]
    assert len(claims) > 0
    holds = claims["holds"].astype(str).str.strip()
    assert holds.isin(["True", "False"]).all(), f"holds must be True/False, got {sorted(set(holds))}"
    # without the released predictions the claims on them have no number of ours and fail, saying so: the others
    # are checked and the test is then skipped, as the other tests of the predictions are
    unread = claims["ours"].isna() & (holds == "False") & _predictions_missing()
    assert claims["ours"][~unread].notna().all(), claims[claims["ours"].isna()].to_string()
    failing = claims[(holds != "True") & ~unread]
    assert failing.empty, f"claims that do not hold in {path.name}:\n{failing.to_string()}"
    if unread.any():
        pytest.skip(f"{int(unread.sum())} claims of {path.name} need shared/data/predictions, not found beside the "
                    "checkout")
    # a FAST run that passed is the docs' executed copy (scripts/docs_notebooks.py then need not run it again)
    DOCS_COPIES.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, DOCS_COPIES / path.name)


@needs_kernel
def test_failing_notebook_keeps_its_partial_copy(tmp_path):
    # make demo renders a failing notebook up to its error: the runner writes the partly executed copy
    import nbformat
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import effstats, sys; print(sys.executable)"),
                                         nbformat.v4.new_code_cell("1 / 0"),
                                         nbformat.v4.new_code_cell("print('never')")])
    path = tmp_path / "broken.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        run_notebooks.run_notebook(path, fast=True, out_dir=tmp_path / "out", timeout=120)
    out = nbformat.read(tmp_path / "out" / "broken.ipynb", as_version=4)
    assert out.cells[0].outputs[0]["text"].strip() == str(ROOT / ".venv" / "bin" / "python")  # the effstats kernel
    assert out.cells[1].outputs[0]["ename"] == "ZeroDivisionError" and not out.cells[2].outputs


@needs_kernel
def test_a_run_starts_no_heartbeat_and_still_notices_a_dead_kernel(tmp_path, monkeypatch):
    # the kernel manager says whether the kernel's process lives; jupyter_client's heartbeat thread can hang the run
    import nbformat
    from jupyter_client.channels import HBChannel
    from nbclient.exceptions import DeadKernelError

    started = []
    monkeypatch.setattr(HBChannel, "start", lambda self: started.append(self))
    cells = ["x = 1", "import os; os._exit(1)", "print('never')"]
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), tmp_path / "d.ipynb")
    t = time.monotonic()
    with pytest.raises(DeadKernelError):
        run_notebooks.run_notebook(tmp_path / "d.ipynb", fast=True, timeout=120)
    assert started == [] and time.monotonic() - t < 60


_PORT_TAKEN = """
import socket, sys
from jupyter_client.connect import LocalPortCache
sys.path.insert(0, sys.argv[1])
import run_notebooks

taken = socket.socket()
taken.bind(("127.0.0.1", 0))
taken.listen()
port, real, handed = taken.getsockname()[1], LocalPortCache.find_available_port, []


def find(self, ip):
    handed.append(port if not handed else real(self, ip))
    return handed[-1]


LocalPortCache.find_available_port = find
nb = run_notebooks.run_notebook(run_notebooks.Path(sys.argv[2]), fast=True, out_dir=run_notebooks.Path(sys.argv[3]),
                                timeout=120)
print(handed.count(port), len(handed), repr(nb.cells[0].outputs[0]["text"]))
"""


@needs_kernel
def test_a_kernel_that_cannot_bind_its_port_is_started_again(tmp_path):
    # two kernels started at once by two processes can be handed the same free port: the first kernel's port is
    # taken before it binds it, it ends before its first reply, the notebook runs in another kernel, and the process
    # ends without a traceback of the kernel that is gone
    import nbformat

    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")]), tmp_path / "p.ipynb")
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    proc = subprocess.run([sys.executable, "-c", _PORT_TAKEN, str(ROOT / "scripts"), str(tmp_path / "p.ipynb"),
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    taken, handed, text = proc.stdout.split()
    assert taken == "1" and int(handed) >= 10 and text == repr("42\n")  # 5 ports a kernel, two kernels
    assert nbformat.read(tmp_path / "out" / "p.ipynb", as_version=4).cells[0].outputs[0]["text"] == "42\n"
    assert "p.ipynb: the kernel ended as it started" in proc.stderr
    assert "Traceback" not in proc.stderr.split("starting another")[-1], proc.stderr[-3000:]


@needs_kernel
def test_timings_record_where_the_run_wrote_its_claims(tmp_path, monkeypatch):
    # render_reports.py reads each notebook's claims from the folder its run wrote them to
    import nbformat

    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), tmp_path / "tiny.ipynb")
    monkeypatch.setenv("EFFSTATS_FIGURES", "../figs")  # relative: to the notebook's folder, the kernel's cwd
    row = run_notebooks.run_one(tmp_path / "tiny.ipynb", fast=True, out_dir=None, progress=False)
    assert row["status"] == "ok" and row["figures"] == str(tmp_path.parent / "figs")
    assert list(row) == run_notebooks.TIMINGS_FIELDS


@needs_kernel
def test_timings_record_the_kernels_cpu_time(tmp_path):
    # CPU seconds of the kernel and of the processes it starts, whatever else the machine runs meanwhile
    import nbformat

    burn = ("import time\n"
            "def burn(s):\n"
            "    t = time.process_time()\n"
            "    while time.process_time() - t < s:\n"
            "        pass\n")
    child = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {burn + 'burn(1.0)'!r}], check=True)"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(burn + "burn(1.0)"),
                                                   nbformat.v4.new_code_cell(child)]), tmp_path / "busy.ipynb")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), tmp_path / "idle.ipynb")
    busy = run_notebooks.run_one(tmp_path / "busy.ipynb", fast=True, out_dir=None, progress=False)
    idle = run_notebooks.run_one(tmp_path / "idle.ipynb", fast=True, out_dir=None, progress=False)
    assert busy["status"] == idle["status"] == "ok"
    # 1 s in the kernel and 1 s in its child, on top of the kernel's start-up that the idle notebook also pays
    assert float(busy["cpu_seconds"]) >= 2.0
    assert float(idle["cpu_seconds"]) <= float(busy["cpu_seconds"]) - 1.5
