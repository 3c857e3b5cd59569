"""CPU seconds of one ``effstats.reliability.audit`` of a small leaderboard (10 models x 5 scenarios, 20 resamples)
writing its report, and of its two figures alone (built, laid out and saved as the report saves them).

The table is the one the audit tests write (tests/test_audit_exports.py's ``_board``), in a temporary folder. Each
measure is the median of ``--repeats`` runs in this process after one warm-up run (imports, font cache), in CPU
seconds of this process and the children it waited for (user + system): the machine may be shared.

Usage: python benchmarks/bench_audit_figures.py [--repeats 5] [--profile]
"""
from __future__ import annotations

import argparse
import io
import statistics
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from effstats.reliability import audit
from bench_tinybenchmarks import process_cpu as cpu  # the sibling script's (run as a script from benchmarks/)


def board(n_models: int = 10, n_scen: int = 5, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = np.clip(np.linspace(0.85, 0.3, n_models)[:, None] + rng.normal(0, 0.06, (n_models, n_scen)), 0, 1)
    return pd.DataFrame(x.round(3), index=pd.Index([f"org/model-{i}" for i in range(n_models)], name="model"),
                        columns=[f"S{j}" for j in range(n_scen)])


def median_cpu(f, repeats: int) -> float:
    f()  # warm-up
    runs = []
    for _ in range(repeats):
        start = cpu()
        f()
        runs.append(cpu() - start)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="print cProfile's 40 costliest calls of 3 audits")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="effstats-bench-figures-") as tmp:
        tmp = Path(tmp)
        board().to_csv(tmp / "board.csv")

        def one_audit():
            return audit(tmp / "board.csv", tmp / "report", n_boot=20, progress=False, force=True)

        if args.profile:
            import cProfile
            import pstats

            one_audit()
            prof = cProfile.Profile()
            prof.runcall(lambda: [one_audit() for _ in range(3)])
            pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
            return
        res = one_audit()

        def figures():
            # as the report saves them: the figures at the PNG files' dpi, when the code has that parameter
            figs = res._figures(dpi=110) if hasattr(res, "_figures") else res.figures
            for fig in figs.values():
                fig.savefig(io.BytesIO(), format="png", dpi=110)

        t_audit = median_cpu(one_audit, args.repeats)
        t_figs = median_cpu(figures, args.repeats)
        print(f"audit of a 10 x 5 table writing its report, median of {args.repeats}: {t_audit:.3f} CPU s; "
              f"its {len(res.figures)} figures built and saved: {t_figs:.3f} CPU s")


if __name__ == "__main__":
    main()
