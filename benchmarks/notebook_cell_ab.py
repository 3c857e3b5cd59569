"""Time one expression over the definitions of a notebook's cell, to compare two versions of that cell (A/B).

The set-up cells run first (cwd the notebook's folder, ``%`` lines dropped), then the cell up to its first line that
starts with ``--stop`` (its definitions, not its work), then ``--expr`` is evaluated and timed in CPU seconds of
this process; its value is pickled to ``--out`` so that two versions' results can be compared
(``DataFrame.equals``). Run the two notebooks alternately in separate processes, e.g. sortsearch.ipynb's design
experiment, the committed notebook against a changed copy:

    git show main:notebooks/sortsearch.ipynb > /tmp/sortsearch_main.ipynb
    for nb in /tmp/sortsearch_main.ipynb notebooks/sortsearch.ipynb /tmp/sortsearch_main.ipynb \\
              notebooks/sortsearch.ipynb; do
        EFFSTATS_FAST=0 EFFSTATS_FIGURES=/tmp/figs OPENBLAS_NUM_THREADS=1 \\
            .venv/bin/python benchmarks/notebook_cell_ab.py $nb --setup 1 2 4 --cell 11 \\
            --out /tmp/dc_$(basename $nb .ipynb).pkl --expr \\
            'pd.concat([design_coverage(rm, n_new, m, [8, 32, 128, 512, 2048], N_SPLITS, 20).assign(data=name)
                        for name, rm, n_new, m in [("ImageNet", imagenet, 17, 50), ("CIFAR-10", cifar, 10, 20)]],
                       ignore_index=True)'
    done

Run: ``.venv/bin/python benchmarks/notebook_cell_ab.py NOTEBOOK --setup I [I ...] --cell I --expr EXPR
[--stop PREFIX] [--out FILE]``
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import time
from pathlib import Path


def cell_code(nb: dict, i: int) -> str:
    """Code cell ``i``'s source without its ``%`` lines."""
    return "\n".join(line for line in "".join(nb["cells"][i]["source"]).splitlines() if not line.startswith("%"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebook", type=Path)
    ap.add_argument("--setup", type=int, nargs="+", required=True, help="cells run first (parameters, imports, data)")
    ap.add_argument("--cell", type=int, required=True, help="the cell whose definitions the expression uses")
    ap.add_argument("--stop", default="t = time.perf_counter()", help="the cell runs up to its first line so starting")
    ap.add_argument("--expr", required=True, help="the expression timed")
    ap.add_argument("--out", type=Path, help="pickle of the expression's value")
    args = ap.parse_args()
    nb = json.loads(args.notebook.read_text(encoding="utf-8"))
    os.chdir(args.notebook.resolve().parent)
    namespace: dict = {"__name__": "__main__"}
    for i in args.setup:
        exec(compile(cell_code(nb, i), f"<cell {i}>", "exec"), namespace)
    lines = cell_code(nb, args.cell).splitlines()
    stop = next((n for n, line in enumerate(lines) if line.startswith(args.stop)), len(lines))
    exec(compile("\n".join(lines[:stop]), f"<cell {args.cell}>", "exec"), namespace)
    t = time.process_time()
    value = eval(args.expr, namespace)
    print(f"{args.notebook.name}: {time.process_time() - t:.2f} CPU s", flush=True)
    if args.out is not None:
        args.out.write_bytes(pickle.dumps(value))


if __name__ == "__main__":
    main()
