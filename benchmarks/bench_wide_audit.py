"""``effstats audit`` of wide score tables of thousands of columns: what reading them costs a column.

Three tables are simulated in a folder: ``scores.csv``, 60 models × 5,000 score columns (fractions printed to 3
decimals, a few cells '-', plain column names), and ``classes.tsv``, a per-scenario export in ImageNet's layout (112
entries × 1,000 class accuracies, beside them a weight name, the published accuracy in percent, a parameter count
written "633.5M", a link column and the architecture), and ``binary.csv``, 30 models × 3,000 columns of 0/1. The
command runs in a process of its own under each tree given with ``--tree`` (a checkout: its folder is put first on
``PYTHONPATH``), alternately, ``--repeats`` times;
CPU seconds are user + system of the process. ``--read`` times reading the table as the audit reads it
(``read_scores``) instead. ``--same`` checks that every tree writes byte-identical reports (with ``--read``: reads
equal frames, attributes and published aggregate); ``--profile TABLE`` prints cProfile's costliest calls of
reading TABLE with the first tree. ``--agreement AGGREGATE`` times the audit's per-scenario agreement alone
(``_scenario_agreement``, the CPU seconds of that call) on the first ``--columns`` scenarios of ``scores.csv``, with
``--same``: the same table, bit for bit.

Usage: python benchmarks/bench_wide_audit.py --tree /work/main --tree . [--repeats 3] [--same] [--read] [--dir DIR]
       python benchmarks/bench_wide_audit.py --tree /work/main --tree . --agreement mwr --columns 2000 [--same]
"""
from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd


def write_tables(folder: Path, seed: int = 0) -> dict[str, Path]:
    """The two tables (written once; a folder holding them is re-used)."""
    rng = np.random.default_rng(seed)
    paths = {"scores": folder / "scores.csv", "classes": folder / "classes.tsv", "binary": folder / "binary.csv"}
    if all(p.exists() for p in paths.values()):
        return paths
    m, s = 60, 5000
    ability = rng.normal(size=m)
    x = 1 / (1 + np.exp(-(ability[:, None] + rng.normal(0, 1, (m, s)))))
    cells = pd.DataFrame(np.round(x, 3), columns=[f"s{j:04d}" for j in range(s)]).astype(object)
    cells = cells.mask(rng.random((m, s)) < 0.002, "-")
    cells.insert(0, "model", [f"org{i % 7}/model-{i}" for i in range(m)])
    cells.to_csv(paths["scores"], index=False)
    m, s = 112, 1000
    ability = rng.normal(size=m)
    acc = np.clip(0.75 + 0.08 * ability[:, None] + rng.normal(0, 0.1, (m, s)), 0, 1).round(2)
    mean = acc.mean(axis=1)
    classes = pd.DataFrame({
        "Weight": [f"Arch{i % 79}_Weights.IMAGENET1K_V{i // 79 + 1}" for i in range(m)],
        "Acc@1": np.round(100 * mean, 3),
        "Params": [f"{p:.1f}M" for p in rng.uniform(1, 700, m)],
        "Recipe": "link",
        "Model": [f"arch{i % 79}_{i}" for i in range(m)],
        "acc": np.round(mean, 5),
        **{f"acc_{j}": acc[:, j] for j in range(s)},
    })
    classes.to_csv(paths["classes"], sep="\t", index=False)
    m, s = 30, 3000
    ability = rng.normal(size=m)
    right = rng.random((m, s)) < 1 / (1 + np.exp(-(ability[:, None] + rng.normal(0, 1, (m, s)))))
    binary = pd.DataFrame(right.astype(int), columns=[f"item{j}" for j in range(s)])
    binary.insert(0, "model", [f"m{i}" for i in range(m)])
    binary.to_csv(paths["binary"], index=False)
    return paths


# the table read as the audit reads it, and what was read saved for the comparison of the trees
READ = ("import pickle, sys, warnings; warnings.simplefilter('ignore'); from effstats.cli import read_scores; "
        "w, p = read_scores(sys.argv[1]); pickle.dump((w, w.attrs, p, None if p is None else p.attrs), "
        "open(sys.argv[2], 'wb'))")


# the per-scenario agreement on the first N scenarios of a table, as the audit computes it; its CPU seconds printed
AGREEMENT = ("import pickle, sys, time, warnings; warnings.simplefilter('ignore'); from effstats.cli import "
             "read_scores; from effstats.reliability._benchmark import Benchmark; from effstats.reliability._winrate "
             "import _score; from effstats.reliability._audit_tables import _scenario_agreement; "
             "w = read_scores(sys.argv[1])[0].iloc[:, :int(sys.argv[4])]; b = Benchmark.from_data(w, name='SCORES'); "
             "num, den = b.sub_sums(); agg = sys.argv[3]; main = _score(b, num, den, agg, 'strict')[0]; "
             "t = time.process_time(); tab = _scenario_agreement(b, num, den, main, agg, 'strict'); "
             "print(time.process_time() - t); pickle.dump(tab, open(sys.argv[2], 'wb'))")


def agreement(tree: Path, table: Path, out: Path, aggregate: str, columns: int) -> float:
    """CPU seconds of the per-scenario agreement alone with ``tree``'s code, the table pickled to ``out``."""
    env = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS="1")
    got = subprocess.run([sys.executable, "-c", AGREEMENT, str(table), str(out), aggregate, str(columns)], env=env,
                         check=True, capture_output=True, text=True, cwd=table.parent)
    return float(got.stdout.split()[-1])


def run(tree: Path, table: Path, out: Path, read: bool = False) -> float:
    """CPU seconds (user + system) of ``effstats audit table`` with ``tree``'s code (``read``: of reading it,
    what was read pickled to ``out``), in a process of its own, imports included."""
    env = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS="1")
    before = os.times()
    cmd = ([sys.executable, "-c", READ, str(table), str(out)] if read else
           [sys.executable, "-m", "effstats", "audit", str(table), "--out", str(out), "--no-progress", "--n-boot",
            "200", "--jobs", "1", "--force"])
    # from the table's folder: Python puts the working folder before PYTHONPATH, and a checkout's would win
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=table.parent)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def same_reading(a: Path, b: Path) -> bool:
    """Whether two trees read the same frames, attributes and published aggregate."""
    import pickle

    (wa, aa, pa, qa), (wb, ab, pb, qb) = (pickle.loads(p.read_bytes()) for p in (a, b))
    pd.testing.assert_frame_equal(wa, wb)
    if pa is not None or pb is not None:
        pd.testing.assert_series_equal(pa, pb)
    return repr(aa) == repr(ab) and repr(qa) == repr(qb)


def same_reports(a: Path, b: Path) -> bool:
    """Whether two report folders hold the same files, byte for byte."""
    names = sorted(p.name for p in a.iterdir())
    return names == sorted(p.name for p in b.iterdir()) and all(
        filecmp.cmp(a / n, b / n, shallow=False) for n in names)


def profile(tree: Path, table: Path) -> None:
    """cProfile's costliest calls (by cumulative time) of ``read_scores(table)`` with ``tree``'s code."""
    code = ("import cProfile, pstats, sys, warnings; from effstats.cli import read_scores; "
            "warnings.simplefilter('ignore'); p = cProfile.Profile(); p.runcall(read_scores, sys.argv[1]); "
            "pstats.Stats(p).sort_stats('cumulative').print_stats(30)")
    subprocess.run([sys.executable, "-c", code, str(table)], env=dict(os.environ, PYTHONPATH=str(tree)), check=True,
                   cwd=table.parent)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", type=Path, required=True, help="a checkout to time (repeatable)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--same", action="store_true", help="check that the trees' reports are byte-identical")
    ap.add_argument("--profile", choices=["scores", "classes", "binary"])
    ap.add_argument("--read", action="store_true", help="time reading the tables (read_scores), not the audit")
    ap.add_argument("--dir", type=Path, help="folder for the tables (kept); default: a temporary folder")
    ap.add_argument("--agreement", choices=["mwr", "mean", "mean_of_means"],
                    help="time the per-scenario agreement alone with this aggregate")
    ap.add_argument("--columns", type=int, default=5000, help="with --agreement: the scenarios of scores.csv used")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="effstats-bench-wide-") as tmp:
        folder = args.dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        tables = write_tables(folder)
        if args.profile:
            return profile(args.tree[0].resolve(), tables[args.profile])
        print(f"load average at the start: {os.getloadavg()[0]:.1f}")
        if args.agreement:
            times = {i: [] for i in range(len(args.tree))}
            for _ in range(args.repeats):
                for i, tree in enumerate(args.tree):  # alternately: the machine's load drifts
                    times[i].append(agreement(tree.resolve(), tables["scores"], Path(tmp) / f"agree{i}.pkl",
                                              args.agreement, args.columns))
            for i, tree in enumerate(args.tree):
                print(f"agreement, {args.agreement}, {args.columns} scenarios: {tree}: CPU s "
                      + ", ".join(f"{t:.2f}" for t in times[i]))
            if args.same and len(args.tree) > 1:
                tabs = [pd.read_pickle(Path(tmp) / f"agree{i}.pkl") for i in range(len(args.tree))]
                print(f"tables identical: {all(t.equals(tabs[0]) for t in tabs[1:])}")
            print(f"load average at the end: {os.getloadavg()[0]:.1f}")
            return
        for name, table in tables.items():
            times: dict[int, list[float]] = {i: [] for i in range(len(args.tree))}
            for _ in range(args.repeats):
                for i, tree in enumerate(args.tree):  # alternately: the machine's load drifts
                    times[i].append(run(tree.resolve(), table, Path(tmp) / f"{name}-out{i}", args.read))
            for i, tree in enumerate(args.tree):
                print(f"{name}: {tree}: CPU s " + ", ".join(f"{t:.2f}" for t in times[i]))
            if args.same and len(args.tree) > 1:
                same = all((same_reading if args.read else same_reports)(Path(tmp) / f"{name}-out0",
                                                                           Path(tmp) / f"{name}-out{i}")
                           for i in range(1, len(args.tree)))
                print(f"{name}: {'frames equal' if args.read else 'reports identical'}: {same}")
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
