"""A notebook's code cells run in one process, each cell's CPU seconds and a cProfile of it.

The cells run in order in this process (cwd ``notebooks/``, matplotlib's Agg backend, ``display`` and ``plt.show``
doing nothing, ``%`` lines dropped and ``%%`` cells skipped: a notebook whose later cells read an ``%%R`` cell's
results stops there), so that each cell's CPU time (user + system of this process and of the children it waited for)
and a profile of the calls it makes can be read, which ``scripts/run_notebooks.py`` (one kernel per notebook) does
not give. ``--set NAME=EXPR`` appends assignments to the parameters cell (``--set N_JOBS=1`` keeps disco.ipynb's last
section in this process, where the profile sees it). The profiles use the process's CPU clock,
so that a loaded machine does not count the time other processes take; a cell's profile is written when it ends, to
``OUT/cellNN.prof`` (read with ``pstats``), and its times to ``OUT/cells.tsv`` (cell, wall s, CPU s, children's
CPU s). cProfile adds a cost to every Python call: the CPU seconds of ``--no-profile`` runs are the ones to compare.

Run: ``EFFSTATS_FAST=0 EFFSTATS_FIGURES=/tmp/figs .venv/bin/python benchmarks/profile_notebook.py notebooks/disco.ipynb
/tmp/prof [--no-profile] [--set N_JOBS=1]``
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import resource
import time
from pathlib import Path


def cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its waited-for children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebook", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--no-profile", action="store_true", help="time the cells only")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=EXPR",
                    help="an assignment appended to the parameters cell (repeatable)")
    args = ap.parse_args()
    nb = json.loads(args.notebook.read_text())
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.chdir(args.notebook.resolve().parent)
    import matplotlib

    matplotlib.use("Agg")
    import IPython.display
    import matplotlib.pyplot as plt

    plt.show = lambda *a, **k: plt.close("all")
    IPython.display.display = lambda *a, **k: None
    namespace: dict = {"__name__": "__main__"}
    code_cells = [(i, c) for i, c in enumerate(nb["cells"])
                  if c["cell_type"] == "code" and not "".join(c["source"]).lstrip().startswith("%%")]
    with open(out / "cells.tsv", "w") as tsv:
        for n, (i, cell) in enumerate(code_cells):
            lines = [line for line in "".join(cell["source"]).splitlines() if not line.startswith("%")]
            if n == 0:
                lines += [s.replace("=", " = ", 1) for s in args.set]
            code = compile("\n".join(lines), f"<cell {i}>", "exec")
            (own0, kids0), t0 = cpu(), time.perf_counter()
            prof = None if args.no_profile else cProfile.Profile(time.process_time)
            if prof is not None:
                prof.enable()
            try:
                exec(code, namespace)
            finally:
                if prof is not None:
                    prof.disable()
                    prof.dump_stats(out / f"cell{i:02d}.prof")
            (own1, kids1), wall = cpu(), time.perf_counter() - t0
            row = f"{i}\t{wall:.1f}\t{own1 - own0:.1f}\t{kids1 - kids0:.1f}"
            print("cell", row.replace("\t", " "), flush=True)
            tsv.write(row + "\n")
            tsv.flush()


if __name__ == "__main__":
    main()
