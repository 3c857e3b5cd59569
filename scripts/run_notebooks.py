#!/usr/bin/env python3
"""Execute the notebooks in notebooks/ with nbclient (in full unless --fast) in the "effstats" Jupyter kernel.

Figures go to figures/ (or $EFFSTATS_FIGURES; with --fast to build/fast-figures/, so that a FAST run never overwrites
the full runs' figures) and show inline in the executed copies: nothing sets a matplotlib backend, so the kernel uses
its inline backend as in Jupyter. Prints each notebook's elapsed time and the CPU time
of its kernel (with the kernel's children: what the notebook costs, however busy the machine) and a summary table;
with --out DIR writes the executed copies and DIR/timings.csv (read by render_reports.py for the index).
A failing notebook does not stop the others: its partly executed copy is written and the exit status is 1.
With --reports DIR each executed copy is also rendered as render_reports.py renders it (DIR/<name>.html, the same
page), and DIR/index.html at the end: a finished notebook's page waits while every lane runs a notebook and is
rendered in the first lane that has no notebook left to start, beside the notebooks still running, rather than
after all of them.
Without the released per-item predictions (effstats.datasets.data_root, as the kernel looks them up) only the notebooks
that need none run (NEEDS_NO_DATA), after one line saying where to put the predictions; the exit status is then 1.

Usage: run_notebooks.py [--fast] [--out DIR [--reports DIR]] [--jobs N] [--timeout SECONDS] [NAME ...]
"""
from __future__ import annotations

import argparse
import atexit
import csv
import os
import resource
import signal
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import nbclient
import nbformat
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
KERNEL = "effstats"  # the .venv registered by scripts/setup.sh (.venv/share/jupyter/kernels/effstats)
# figures: where this run wrote its figures and claims table (render_reports.py reads the claims from there)
# cpu_seconds: user + system time of the kernel and the children it waited for (empty where not measured)
TIMINGS_FIELDS = ["notebook", "mode", "seconds", "cpu_seconds", "status", "finished_utc", "figures"]
# kernels started for a notebook whose kernel ends before its first reply (see run_notebook)
KERNEL_STARTS = 3
# the notebooks that run to the end without the released per-item predictions (the others read them)
NEEDS_NO_DATA = frozenset({"tour"})
# (fast, EFFSTATS_DATA) of the lookups that found the predictions (missing_data)
_DATA_FOUND: set[tuple[bool, str | None]] = set()


def kernel_env(fast: bool) -> dict[str, str]:
    """The kernel's environment: ours plus the FAST switch and the figures folder (never a matplotlib backend)."""
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["EFFSTATS_FAST"] = "1" if fast else "0"
    env.setdefault("EFFSTATS_FIGURES", str(ROOT / ("build/fast-figures" if fast else "figures")))
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # quiet ipykernel's debugger warning
    return env


def missing_data(fast: bool) -> str | None:
    """None when the kernel finds the released per-item predictions, else the one line that says where to put them.

    Looked up as the kernel looks them up (its environment, the notebooks' folder as the working directory). A
    process that runs notebooks one call at a time (the tests' FAST runs) looks them up once for a given
    ``EFFSTATS_DATA``: the predictions found are remembered, their absence is not (they may be put there meanwhile).
    """
    if (fast, os.environ.get("EFFSTATS_DATA")) in _DATA_FOUND:
        return None
    import subprocess

    code = ("from effstats.datasets.predictions import data_root\n"
            "try:\n    data_root()\nexcept FileNotFoundError as exc:\n    print(exc)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=NOTEBOOKS, env=kernel_env(fast), capture_output=True,
                          text=True)
    if proc.returncode or not proc.stdout.strip():
        if not proc.returncode:
            _DATA_FOUND.add((fast, os.environ.get("EFFSTATS_DATA")))
        return None  # found (or the check itself failed: the notebooks then say why)
    why = proc.stdout.strip().splitlines()[0]
    why = why[why.find("Looked in"):] if "Looked in" in why else why
    return ("predictions: NOT FOUND - make demo needs them: put them in shared/data/predictions beside the checkout or "
            f"set EFFSTATS_DATA (README, Data); {why[:400]}")


def kernel_manager_class() -> type:
    """nbclient's kernel manager, with kernel clients that start no heartbeat channel.

    The heartbeat is redundant here: a client made by a local kernel manager asks the manager whether the kernel's
    process is alive, and nbclient does so between messages. And jupyter_client's heartbeat thread can wait for ever
    for a reply whose arrival its poll has already taken (a ``zmq.Poller`` and an asyncio socket share the socket's
    edge-triggered event), so that stopping the channels after the last cell hangs the run.
    """
    from jupyter_client.asynchronous import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class Client(AsyncKernelClient):
        def start_channels(self, shell=True, iopub=True, stdin=True, hb=False, control=True):
            super().start_channels(shell=shell, iopub=iopub, stdin=stdin, hb=False, control=control)

    class Manager(AsyncKernelManager):
        @default("client_factory")
        def _client_factory_default(self):
            return Client

    return Manager


def run_notebook(
    path: Path, *, fast: bool, out_dir: Path | None = None, timeout: int = 3600, kernel_name: str = KERNEL,
    progress: bool = False,
) -> nbformat.NotebookNode:
    """Execute one notebook with cwd = its folder and return it.

    ``progress`` shows a tqdm bar over its code cells on stderr. Raises nbclient's CellExecutionError on a cell
    error (after writing the partly executed copy to out_dir).
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(kernel_name)
    except NoSuchKernel:
        raise RuntimeError(
            f"kernel_name: no Jupyter kernel {kernel_name!r} is registered; run `make setup` "
            "(it registers the .venv as the 'effstats' kernel)"
        ) from None
    attempt = 1
    while True:
        nb = nbformat.read(path, as_version=4)
        try:
            _execute(nb, path, fast=fast, timeout=timeout, kernel_name=kernel_name, progress=progress)
            return nb
        except RuntimeError as exc:
            # a kernel that ended before its first reply, no cell run: jupyter_client picks a kernel's free ports
            # by binding and releasing them, and a kernel started at the same moment by another process (make
            # demo's other notebook) can take one first; another kernel gets other ports
            if "before replying to kernel_info" not in str(exc) or attempt == KERNEL_STARTS:
                raise
            print(f"  {path.name}: the kernel ended as it started ({exc}); starting another", file=sys.stderr,
                  flush=True)
            attempt += 1
        finally:
            if out_dir is not None:
                out_dir.mkdir(parents=True, exist_ok=True)
                nbformat.write(nb, out_dir / path.name)


def _execute(nb: nbformat.NotebookNode, path: Path, *, fast: bool, timeout: int, kernel_name: str,
             progress: bool) -> None:
    """:func:`run_notebook`'s execution of ``nb`` (read from ``path``) in a kernel of its own."""
    client = nbclient.NotebookClient(
        nb, timeout=timeout, kernel_name=kernel_name, resources={"metadata": {"path": str(path.parent)}},
        kernel_manager_class=kernel_manager_class(),
    )
    # Debian's ipywidgets (6) opens widget comms without the "state" nbclient 0.7 expects (KeyError: 'state',
    # e.g. from tqdm.auto's bars): without a front end there is nothing to mirror, so ignore such comms.
    widget_handler = client.comm_open_handlers.get("jupyter.widget")
    if widget_handler is not None:
        client.comm_open_handlers["jupyter.widget"] = (
            lambda msg: widget_handler(msg) if "state" in msg["content"].get("data", {}) else None)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=sum(c.cell_type == "code" for c in nb.cells), desc=path.name, unit="cell", file=sys.stderr)
        client.on_cell_executed = lambda **kw: bar.update(1)
    try:
        client.execute(env=kernel_env(fast))
    finally:
        if bar is not None:
            bar.close()
        if getattr(client, "km", None) is None:
            # a kernel that failed to start leaves nbclient's exit hook behind, which then fails (an "Exception
            # ignored in atexit callback" traceback at the process's end) on the manager it has let go
            atexit.unregister(client._cleanup_kernel)


def _seconds(value: str | None, empty_ok: bool) -> bool:
    if value in (None, ""):
        return empty_ok
    try:
        return float(value) >= 0
    except ValueError:
        return False


def read_timings(out_dir: Path | None) -> dict[str, dict]:
    """The rows of out_dir/timings.csv by notebook, in its columns ({} without one); rows it cannot use (no
    notebook name, seconds that are no number) are left out with one warning line on stderr."""
    path = None if out_dir is None else out_dir / "timings.csv"
    if path is None or not path.is_file():
        return {}
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            raw = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        print(f"warning: {path} is unreadable ({exc}); its timings are ignored", file=sys.stderr, flush=True)
        return {}
    good = {r["notebook"]: {k: r.get(k) or "" for k in TIMINGS_FIELDS} for r in raw
            if r.get("notebook") and _seconds(r.get("seconds"), False) and _seconds(r.get("cpu_seconds"), True)}
    if len(good) < len(raw):
        print(f"warning: {path}: {len(raw) - len(good)} of {len(raw)} rows without a notebook name or with seconds "
              "that are no number are ignored (they are dropped when the file is rewritten)", file=sys.stderr,
              flush=True)
    return good


def write_timings(out_dir: Path, rows: list[dict]) -> Path:
    """Merge this run's rows into out_dir/timings.csv (one row per notebook, the latest run wins), atomically and
    with the permissions a plain ``open(path, "w")`` gives, as the executed copies beside it
    (:func:`effstats._shared.write_text_atomic`)."""
    import io

    from effstats._shared import write_text_atomic

    merged = read_timings(out_dir)
    merged.update({r["notebook"]: r for r in rows})
    text = io.StringIO(newline="")
    w = csv.DictWriter(text, fieldnames=TIMINGS_FIELDS, extrasaction="ignore")
    w.writeheader()
    w.writerows(merged[k] for k in sorted(merged))
    return write_text_atomic(out_dir / "timings.csv", text.getvalue())


def summary_table(rows: list[dict]) -> str:
    """A plain-text table of the run: notebook, mode, wall and CPU time (minutes:seconds), status, and the totals."""
    def mmss(s: float) -> str:
        return f"{int(s // 60)}:{s % 60:04.1f}"

    def cpu(r: dict) -> str:
        return mmss(float(r["cpu_seconds"])) if r.get("cpu_seconds") not in (None, "") else "?"

    width = max([len("notebook")] + [len(r["notebook"]) for r in rows])
    lines = [f"{'notebook':<{width}}  mode  {'time':>7}  {'CPU':>7}  status", "-" * (width + 34)]
    lines += [f"{r['notebook']:<{width}}  {r['mode']:<4}  {mmss(float(r['seconds'])):>7}  {cpu(r):>7}  {r['status']}"
              for r in rows]
    total = mmss(sum(float(r["seconds"]) for r in rows))
    known = [r for r in rows if r.get("cpu_seconds") not in (None, "")]
    total_cpu = mmss(sum(float(r["cpu_seconds"]) for r in known)) + ("" if len(known) == len(rows) else "+?")
    lines += ["-" * (width + 34), f"{'total':<{width}}        {total:>7}  {total_cpu:>7}"]
    return "\n".join(lines)


def children_cpu_seconds() -> float:
    """User + system CPU seconds of this process's children that have ended and been waited for (with theirs).

    nbclient shuts a notebook's kernel down and waits for it before ``execute`` returns, so the difference of two
    readings around one notebook is the CPU time of its kernel and of what the kernel started and waited for.
    """
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_one(path: Path, fast: bool, out_dir: Path | None, progress: bool, timeout: int = 3600) -> dict:
    """Execute one notebook (``timeout``: seconds a cell may take), print its outcome and time, and return its
    timings row (never raises)."""
    mode = "fast" if fast else "full"
    print(f"executing {path.name} ({mode}) ...", flush=True)
    t, cpu = time.perf_counter(), children_cpu_seconds()
    status = "ok"
    try:
        run_notebook(path, fast=fast, out_dir=out_dir, timeout=timeout, progress=progress)
    except CellExecutionError as exc:
        status = "error"
        print(f"  ERROR in {path.name}:\n{str(exc)[-3000:]}", file=sys.stderr, flush=True)
    except Exception as exc:  # a timeout, a dead kernel, ...: report it and go on with the other notebooks
        status = f"error ({type(exc).__name__})"
        print(f"  ERROR in {path.name}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
    elapsed, cpu = time.perf_counter() - t, children_cpu_seconds() - cpu
    print(f"  {path.name}: {status} in {elapsed:.1f} s ({cpu:.1f} s CPU)", flush=True)
    return {"notebook": path.stem, "mode": mode, "seconds": f"{elapsed:.1f}", "cpu_seconds": f"{cpu:.1f}",
            "status": status,
            "finished_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
            # as the kernel sees it: a relative EFFSTATS_FIGURES is relative to the notebook's folder (its cwd)
            "figures": str((path.parent / kernel_env(fast)["EFFSTATS_FIGURES"]).resolve())}


def _render_reports():
    """scripts/render_reports.py as a module (this folder is no package; a spawned worker loads it the same way)."""
    import importlib.util

    module = sys.modules.get("render_reports")
    if module is None:
        spec = importlib.util.spec_from_file_location("render_reports", Path(__file__).with_name("render_reports.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["render_reports"] = module
    return module


def render_one(copy: Path, reports: Path, row: dict) -> str | None:
    """Render the executed copy of one notebook as reports/<name>.html, as render_reports.py renders it from
    timings.csv (``row`` is the notebook's row there); None when done, else the one line that says why not (never
    raises)."""
    try:
        rr = _render_reports()
        rr.render_page(copy, reports, row, rr.claims_reader({row["notebook"]: row})(row["notebook"]))
    except Exception as exc:  # one page that cannot be rendered does not stop the others
        return f"{copy.stem}: {type(exc).__name__}: {exc}"
    return None


def _stop_pool(pool, signum: int) -> None:
    """Stopped (make interrupted, a timeout): end the worker processes and the kernels they started, then exit.

    The workers outlive a SIGTERM of their own (nbclient turns it into a failed notebook and the worker waits for
    the next one) and the kernels run in sessions of their own, so both are ended here, kernels first.
    """
    workers = [p.pid for p in getattr(pool, "_processes", {}).values()]
    kernels = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) in workers:  # the parent's pid
            kernels.append(int(stat.parent.name))
    for pid, sig in [(k, signal.SIGTERM) for k in kernels] + [(w, signal.SIGKILL) for w in workers]:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    print(f"stopped (signal {signum}): ended {len(workers)} worker(s) and {len(kernels)} kernel(s)", file=sys.stderr,
          flush=True)
    os._exit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="notebook names, with or without .ipynb (default: all)")
    ap.add_argument("--fast", action="store_true",
                    help="FAST mode, what the tests run: each notebook on fewer seeds, splits, models and items "
                         "(EFFSTATS_FAST=1 in the kernel), its claims checked all the same; figures to "
                         "build/fast-figures/ unless $EFFSTATS_FIGURES is set")
    ap.add_argument("--out", type=Path, help="directory for the executed copies and timings.csv")
    ap.add_argument("--jobs", type=int, default=1,
                    help="notebooks run at once (default 1); >1 starts the longest (by the last timings.csv) first")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds a cell may take (default 3600)")
    ap.add_argument("--reports", type=Path,
                    help="directory for the HTML reports (render_reports.py's pages, each rendered after its notebook "
                         "ends, and index.html); needs --out")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs: expected an integer >= 1, got {args.jobs}")
    if args.timeout < 1:
        ap.error(f"--timeout: expected an integer >= 1, got {args.timeout}")
    if args.reports is not None and args.out is None:
        ap.error("--reports: needs --out (the folder of the executed copies that the reports render)")
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    if args.names:
        unknown = sorted(set(args.names) - {p.stem for p in paths} - {p.name for p in paths})
        if unknown:
            ap.error(f"names: no notebook {unknown} in {NOTEBOOKS} (have {[p.stem for p in paths]})")
        paths = [p for p in paths if p.stem in args.names or p.name in args.names]
    # before any notebook runs (a long one would run for nothing): directories that can be made, a renderer
    for option, folder, what in [("--out", args.out, "the executed copies and timings.csv"),
                                 ("--reports", args.reports, "the HTML reports")]:
        if folder is None:
            continue
        try:
            if folder.exists() and not folder.is_dir():
                raise NotADirectoryError(0, "it exists and is not a directory")
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"{ap.prog}: error: {option}: cannot use {str(folder)!r} ({exc.strerror or exc}); give a directory "
                  f"for {what}", file=sys.stderr)
            return 2
    if args.reports is not None:
        missing = _render_reports().nbconvert_missing()
        if missing is not None:
            print(f"{ap.prog}: error: --reports: cannot render: {missing}", file=sys.stderr)
            return 2
    no_data = None
    if any(p.stem not in NEEDS_NO_DATA for p in paths):
        no_data = missing_data(args.fast)
    if no_data is not None:
        skipped = [p.stem for p in paths if p.stem not in NEEDS_NO_DATA]
        paths = [p for p in paths if p.stem in NEEDS_NO_DATA]
        print(f"{no_data}\nnot running {', '.join(skipped)} (they read the predictions)"
              + (f"; running only {', '.join(p.stem for p in paths)}" if paths else ""), file=sys.stderr, flush=True)
        if not paths:
            return 1
    (ROOT / "figures").mkdir(exist_ok=True)
    jobs = min(args.jobs, len(paths)) or 1
    wall = time.perf_counter()
    unrendered = []  # the lines saying which pages could not be rendered
    if jobs == 1:
        rows = [run_one(p, args.fast, args.out, progress=True, timeout=args.timeout) for p in paths]
        if args.reports is not None:  # the one lane is free once the last notebook has run
            unrendered = [render_one(args.out / p.name, args.reports, r) for p, r in zip(paths, rows)
                          if (args.out / p.name).is_file()]
    else:
        import concurrent.futures as cf
        import multiprocessing as mp

        # CPU time where recorded: wall time depends on how busy the machine was
        last = {k: float(r["cpu_seconds"] or r["seconds"]) for k, r in read_timings(args.out).items()}
        # longest first, so that a long notebook does not start last and run alone
        paths.sort(key=lambda p: -last.get(p.stem, float("inf")))
        with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn")) as pool:
            for sig in (signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, lambda signum, frame: _stop_pool(pool, signum))
            # the pool starts its tasks in the order they were given: a page asked for when its notebook ends
            # comes after the notebooks still waiting, so it is rendered by a lane that has none left to start
            runs = {pool.submit(run_one, p, args.fast, args.out, False, args.timeout): p for p in paths}
            waiting, rows = set(runs), []
            while waiting:
                done, waiting = cf.wait(waiting, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    if future not in runs:
                        unrendered.append(future.result())
                        continue
                    rows.append(future.result())
                    copy = args.out / runs[future].name if args.out is not None else None
                    if args.reports is not None and copy.is_file():
                        waiting.add(pool.submit(render_one, copy, args.reports, rows[-1]))
            rows.sort(key=lambda r: r["notebook"])
    if rows:
        print("\n" + summary_table(rows), flush=True)
        if jobs > 1:
            print(f"wall time with {jobs} notebooks at once: {time.perf_counter() - wall:.1f} s", flush=True)
    if args.out is not None and rows:
        print(f"timings written to {write_timings(args.out, rows)}")
    unrendered = [line for line in unrendered if line is not None]
    if args.reports is not None and rows:
        _render_reports().write_index(args.out, args.reports)
        for line in unrendered:
            print(f"reports: NOT rendered: {line}", file=sys.stderr, flush=True)
    figures = (NOTEBOOKS / kernel_env(args.fast)["EFFSTATS_FIGURES"]).resolve()  # as the kernels saw it
    if args.fast and rows and figures == (ROOT / "figures").resolve():
        print(f"note: {figures} now holds FAST-mode figures and tables of {[r['notebook'] for r in rows]}; "
              "run them in full before committing those (or set EFFSTATS_FIGURES for FAST runs)", flush=True)
    if no_data is not None:
        print(f"{no_data}\nnot run: {', '.join(skipped)}", file=sys.stderr, flush=True)
        return 1
    return int(any(r["status"] != "ok" for r in rows) or bool(unrendered))


if __name__ == "__main__":
    sys.exit(main())
