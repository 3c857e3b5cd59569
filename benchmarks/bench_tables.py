"""Reading score tables: ``effstats select`` and ``effstats estimate`` against ``pandas.read_csv`` of the same file.

Targets: each command (a process of its own, imports included) within 2x the time a process takes to import
pandas and ``read_csv`` the same file, wide or long, with at most 1 GB peak memory, at 80 models x 82,756 items of
0/1 (a 15 MB wide CSV, a long CSV of 6.6 M rows). The table is simulated (2PL IRT, eight tasks of lm-eval ids
``<task>/<doc>``) in a temporary folder; an 81st model is the new one, whose results on the chosen items are what
``estimate`` reads. Each command runs ``--repeats`` times, alternating with its peer; the fastest run of each
counts (the machine may be shared). Peak memory is the process's maximum resident set.

``--leaderboard``: the Open LLM Leaderboard's per-item scale, 4,500 models x 30,000 items, written wide (258 MB) or
with ``--layouts long`` long (135 M rows, 4.8 GB: give ``--dir`` a folder with room), each command once beside
``read_csv``; targets ``select`` <= 30 s and <= 4 GB. ``--peer typed`` also times ``read_csv`` of the long file with
the ids as categories and int8 scores (with its defaults the ids are Python strings: 7.5 GB at that scale).

Usage: python benchmarks/bench_tables.py [--models 80] [--items 82756] [--budget 200] [--repeats 2]
       [--layouts wide long] [--leaderboard] [--peer default typed] [--dir DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

TASKS = ["arc_easy", "arc_challenge", "hellaswag", "mmlu_abstract_algebra", "winogrande", "gsm8k",
         "truthfulqa_mc1", "piqa"]


def _run(cmd: list[str], env: dict | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak resident memory (MB) of one process (``env``: its
    environment, default this one's)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _write_tables(folder: Path, n_models: int, n_items: int, layouts: list[str]) -> None:
    """wide.csv and/or long.csv of the reference models; new.npy (the new model's row) and items.json."""
    rng = np.random.default_rng(0)
    sizes = np.full(len(TASKS), n_items // len(TASKS))
    sizes[: n_items - sizes.sum()] += 1
    items = [f"{t}/{i}" for t, s in zip(TASKS, sizes) for i in range(s)]
    theta, b, a = rng.normal(size=n_models + 1), rng.normal(size=n_items), rng.lognormal(0, 0.3, n_items)
    models = [f"org{m % 7}/model-{m}-7b" for m in range(n_models)]
    if (n_models + 1) * n_items <= 2**27:
        x = (rng.random((n_models + 1, n_items)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(np.int8)
    else:  # leaderboard scale: drawn in blocks of models (the whole table in float64 would take gigabytes)
        x = np.concatenate([(rng.random((len(t), n_items)) < 1 / (1 + np.exp(-a * (t[:, None] - b)))).astype(np.int8)
                            for t in np.array_split(theta, max(1, (n_models + 1) * n_items // 2**24))])
    if "wide" in layouts:  # what DataFrame.to_csv(index=False) writes, one block of rows at a time
        with open(folder / "wide.csv", "wb") as f:
            f.write(("model," + ",".join(items) + "\n").encode())
            for start in range(0, n_models, 256):
                block = np.full((min(256, n_models - start), 2 * n_items), ord(","), np.uint8)
                block[:, 0::2] = x[start:start + len(block)] + ord("0")
                block[:, -1] = ord("\n")
                for m, row in zip(models[start:], block):
                    f.write(m.encode() + b"," + row.tobytes())
    if "long" in layouts:
        _write_long(folder / "long.csv", models, items, x[:n_models])
    np.save(folder / "new.npy", x[n_models])
    (folder / "items.json").write_text(json.dumps(items))


def _write_long(path: Path, models: list[str], items: list[str], x: np.ndarray) -> None:
    """What ``DataFrame.to_csv(index=False)`` writes of the long table (columns model, item, score), one model's
    rows at a time: the rows' bytes are laid out once per length of model id and filled by index."""
    tails = [f",{i},0\n".encode() for i in items]
    tail = np.frombuffer(b"".join(tails), np.uint8)
    tail_len = np.fromiter(map(len, tails), np.int64, len(tails))
    layouts: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, int]] = {}
    with open(path, "wb") as f:
        f.write(b"model,item,score\n")
        for name, row in zip(models, x):
            m = name.encode()
            if len(m) not in layouts:  # where each row starts, where its model id, item part and score go
                starts = np.concatenate([[0], np.cumsum(len(m) + tail_len)[:-1]])
                head = (starts[:, None] + np.arange(len(m))).ravel()
                rest = np.repeat(starts + len(m) - np.cumsum(np.r_[0, tail_len[:-1]]), tail_len) + np.arange(len(tail))
                layouts[len(m)] = head, rest, starts + len(m) + tail_len - 2, int(starts[-1] + len(m) + tail_len[-1])
            head, rest, score, size = layouts[len(m)]
            buf = np.empty(size, np.uint8)
            buf[head] = np.tile(np.frombuffer(m, np.uint8), len(items))
            buf[rest] = tail
            buf[score] = row + ord("0")
            f.write(buf.tobytes())


# the peers: read_csv with its defaults (ids as Python strings, scores as int64), and as a careful user reads a
# long table that would not fit so: ids as categories, scores as int8
PEERS = {"default": "import sys, pandas; pandas.read_csv(sys.argv[1])",
         "typed": "import sys, pandas; pandas.read_csv(sys.argv[1], dtype={'model': 'category', 'item': 'category', "
                  "'score': 'int8'})"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=80)
    ap.add_argument("--items", type=int, default=82_756)
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--layouts", nargs="+", choices=["wide", "long"],
                    help="default: wide and long; with --leaderboard, wide")
    ap.add_argument("--leaderboard", action="store_true",
                    help="the Open LLM Leaderboard's scale: 4,500 models x 30,000 items, once")
    ap.add_argument("--peer", nargs="+", choices=list(PEERS), default=["default"],
                    help="read_csv with its defaults, or with the long table's ids as categories and int8 scores "
                         "(a wide table is read with the defaults either way)")
    ap.add_argument("--dir", help="folder for the tables, kept (and re-used by a run of the same sizes); default: a "
                                  "temporary folder")
    ap.add_argument("--write", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.leaderboard:
        args.models, args.items, args.repeats = 4500, 30_000, 1
    args.layouts = args.layouts or (["wide"] if args.leaderboard else ["wide", "long"])
    if args.write:
        return _write_tables(Path(args.write), args.models, args.items, args.layouts)
    with tempfile.TemporaryDirectory(prefix="effstats-bench-tables-") as tmp:
        _bench(args, Path(args.dir) if args.dir else Path(tmp))


def _bench(args: argparse.Namespace, folder: Path) -> None:
    py = sys.executable
    folder.mkdir(parents=True, exist_ok=True)
    files = {"wide": folder / "wide.csv", "long": folder / "long.csv"}
    sizes = folder / "sizes.json"
    todo = [x for x in args.layouts if not (files[x].exists() and sizes.exists()
                                            and json.loads(sizes.read_text()) == [args.models, args.items])]
    if todo:
        sizes.unlink(missing_ok=True)
        # written by a process of its own: a child process starts with its parent's resident memory counted
        _run([py, __file__, "--write", str(folder), "--models", str(args.models), "--items", str(args.items),
              "--layouts", *todo])
        sizes.write_text(json.dumps([args.models, args.items]))
    new = pd.Series(np.load(folder / "new.npy"), index=json.loads((folder / "items.json").read_text()))
    print(f"{args.models} models x {args.items:,} items (0/1); best of {args.repeats}; wall and CPU (user + system) "
          "seconds, each as a ratio to read_csv's")
    print(f"{'layout':<7}{'read_csv':<9}{'file MB':>8}{'read_csv s':>14}{'select s':>14}{'ratio':>12}"
          f"{'estimate s':>14}{'ratio':>12}  peak MB: select / estimate / read_csv")
    for layout in args.layouts:
        f = files[layout]
        out = folder / f"sel_{layout}"
        peers = args.peer if layout == "long" else ["default"]
        runs: dict[str, list[tuple[float, float, float]]] = {k: [] for k in [*peers, "select", "estimate"]}
        for rep in range(args.repeats):
            for peer in peers:
                runs[peer].append(_run([py, "-c", PEERS[peer], str(f)]))
            runs["select"].append(_run([py, "-m", "effstats", "select", str(f), "--budget", str(args.budget),
                                        "--out", str(out), "--force"]))
            chosen = json.loads((out / "manifest.json").read_text())["items"]
            new_file = folder / "new.csv"
            new[chosen].to_frame("org9/new-model-7b").T.rename_axis("model").to_csv(new_file)
            runs["estimate"].append(_run([py, "-m", "effstats", "estimate", str(out), str(new_file),
                                          "--out", str(folder / f"est_{layout}_{rep}"), "--force"]))
        wall = {k: min(r[0] for r in v) for k, v in runs.items()}
        cpu = {k: min(r[1] for r in v) for k, v in runs.items()}
        peak = {k: max(r[2] for r in v) for k, v in runs.items()}
        for peer in peers:
            pair = lambda k: f"{wall[k]:.1f} / {cpu[k]:.1f}"  # noqa: E731
            ratio = lambda k: f"{wall[k] / wall[peer]:.2f} / {cpu[k] / cpu[peer]:.2f}"  # noqa: E731
            print(f"{layout:<7}{peer:<9}{f.stat().st_size / 2**20:>8.0f}{pair(peer):>14}{pair('select'):>14}"
                  f"{ratio('select'):>12}{pair('estimate'):>14}{ratio('estimate'):>12}  "
                  f"{peak['select']:.0f} / {peak['estimate']:.0f} / {peak[peer]:.0f}")


if __name__ == "__main__":
    main()
