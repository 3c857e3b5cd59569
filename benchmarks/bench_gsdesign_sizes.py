"""Speed of native design() with the sample-size search against gsDesign::gsDesign timed inside R, in one run.

Target: native ``design(...).information`` (bounds and the maximum information for power ``1 - beta``) at least
10x faster than ``gsDesign::gsDesign`` for every test type 1-6. gsDesign is timed by R's own loop
(``system.time(for (i in 1:reps) gsDesign(...))``), so the cost of calling R from Python is not counted against
it. Each figure is the best of ``repeat`` batches of ~20 ms of calls on each side, alternating per design, so that
load from other processes hits both alike; the ratio is gsDesign's time over native's, and the geometric mean is
printed per test type and over all designs. Both sides' batches last about as long: a native batch of only as many
calls as gsDesign's (a few ms, ``--same-calls``) starts on the caches R's batch left cold, which costs it 20-40 % per
call that a batch of the same length spreads over ten times as many calls, as R's 20 ms spread R's.

Both sides are timed in CPU time of their process by default (R's ``user.self + sys.self``, Python's
``time.process_time``; both run single-threaded): on a machine shared with other jobs the wall clock counts the time
a process waits for a core, which is several times the work at a load of 10 on 2 cores and falls unevenly on
short native calls and long gsDesign calls. ``--clock wall`` times elapsed time instead.

Run: .venv/bin/python benchmarks/bench_gsdesign_sizes.py [--repeat 6] [--batch 0.02] [--types 3 4] [--clock wall]
[--same-calls]
"""
from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from effstats.sequential import design

# (effstats spending name, parameter, gsDesign sfu, sfupar)
UPPER = [("hsd", -4.0, "sfHSD", -4), ("ld_obf", None, "sfLDOF", 0), ("ld_pocock", None, "sfLDPocock", 0)]
LOWER = ("hsd", -2.0, "sfHSD", -2)


def cases():
    """(label, native kwargs, gsDesign R arguments) for test types 1-6, k = 3 and 5, beta 0.1 and 0.2."""
    for tt, k, beta, (sf, par, rsf, rpar) in itertools.product(range(1, 7), (3, 5), (0.1, 0.2), UPPER):
        kw = dict(k=k, test_type=tt, alpha=0.05 if tt == 2 else 0.025, beta=beta, spending=sf, spending_param=par)
        r_args = f"k={k}, test.type={tt}, alpha=0.025, beta={beta}, sfu={rsf}, sfupar={rpar}"
        if tt > 2:
            kw.update(lower_spending=LOWER[0], lower_param=LOWER[1])
            r_args += f", sfl={LOWER[2]}, sflpar={LOWER[3]}"
        yield f"tt{tt} k={k} beta={beta} {sf}", tt, kw, r_args


# (Python clock, R expression of system.time's result st) by --clock
CLOCK = {"cpu": (time.process_time, "sum(st[c('user.self', 'sys.self')])"),
         "wall": (time.perf_counter, "st[['elapsed']]")}


def time_native(kw: dict, reps: int, clock: str = "cpu") -> float:
    now = CLOCK[clock][0]
    t = now()
    for _ in range(reps):
        design(**kw).information
    return (now() - t) / reps


def time_r(ro, r_args: str, reps: int, clock: str = "cpu") -> float:
    el = ro.r(f"local({{st <- system.time(for (i in 1:{reps}) gsDesign({r_args})); {CLOCK[clock][1]}}})")[0]
    return float(el) / reps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=6, help="batches per design (best of)")
    ap.add_argument("--batch", type=float, default=0.02, help="seconds of gsDesign calls per batch")
    ap.add_argument("--types", type=int, nargs="+", default=list(range(1, 7)), help="test types to time")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="cpu", help="CPU time of each process, or elapsed time")
    ap.add_argument("--same-calls", action="store_true",
                    help="native batches of as many calls as gsDesign's, not of the same length")
    args = ap.parse_args()
    from effstats import rbridge

    rbridge.r_package("gsDesign")
    ro = rbridge._robjects()
    print(f"load {open('/proc/loadavg').read().split()[0]}; {args.clock} time, best of {args.repeat} batches of "
          f"~{args.batch * 1e3:g} ms of gsDesign calls (R's clock ticks in ms), "
          + ("the same number of calls for native" if args.same_calls else f"~{args.batch * 1e3:g} ms of native calls")
          + "; ms per call")
    print(f"{'design':<34}{'native':>9}{'gsDesign':>10}{'ratio':>8}")
    by_type: dict[int, list[float]] = {}
    for label, tt, kw, r_args in cases():
        if tt not in args.types:
            continue
        time_native(kw, 1)  # warm-up
        reps = max(1, round(args.batch / max(time_r(ro, r_args, 3, args.clock), 1e-3)))
        n_reps = reps if args.same_calls else max(reps, round(args.batch / max(time_native(kw, 3, args.clock), 1e-5)))
        tn = tr = np.inf
        for _ in range(args.repeat):  # alternating, so that a burst of load hits both alike
            tn = min(tn, time_native(kw, n_reps, args.clock))
            tr = min(tr, time_r(ro, r_args, reps, args.clock))
        by_type.setdefault(tt, []).append(tr / tn)
        print(f"{label:<34}{tn * 1e3:9.3f}{tr * 1e3:10.3f}{tr / tn:8.1f}")
    print("\ntest type  geometric mean ratio  min ratio")
    for tt, rs in by_type.items():
        print(f"{tt:>9}  {np.exp(np.mean(np.log(rs))):20.1f}  {min(rs):9.1f}")
    allr = [x for rs in by_type.values() for x in rs]
    print(f"      all  {np.exp(np.mean(np.log(allr))):20.1f}  {min(allr):9.1f}")


if __name__ == "__main__":
    main()
