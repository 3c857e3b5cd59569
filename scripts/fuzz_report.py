"""Bad-input campaign over every public effstats callable: prints inputs tried, clear errors, crashes, garbage.

Uses the table in tests/fuzz_cases.py and the classifier in tests/fuzz_harness.py (the same ones
tests/test_fuzz.py drives with hypothesis); here every bad value of every argument is tried with
``--seeds`` random variants (NaN position, out-of-range id, ...).

    .venv/bin/python scripts/fuzz_report.py                 # table per module
    .venv/bin/python scripts/fuzz_report.py --seeds 5 -v    # more variants, list every crash / garbage
    .venv/bin/python scripts/fuzz_report.py --module sortsearch --findings findings/  # one <module>.md per module
    .venv/bin/python scripts/fuzz_report.py --cli -v        # then the command line's campaign (tests/cli_fuzz.py)
    .venv/bin/python scripts/fuzz_report.py --cli-only      # only the command line's

A result is *clear* if a ValueError/TypeError names the argument, *ok* if an equivalent or unusual-but-valid
input gave a correct finite result, *crash* for any other exception (or an error not naming the argument),
and *garbage* for a result accepted for invalid input, NaN/inf where the valid call is finite, or a
different result for an equivalent input.

The command line's campaign (tests/cli_fuzz.py, over 1,200 bad inputs of ``select``, ``estimate``, ``sequential
start|update``, ``audit`` and the program itself) counts per command: *clear* refusals (status 2, one line), *ok*
results (status 0 and correct), *traceback* (an exception escaped, or another status), *unclear* (status 2 but not
one line), *silent* wrong results and valid inputs *refused*.
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))  # the harness lives beside the tests that use it

import fuzz_cases  # noqa: E402
import fuzz_harness  # noqa: E402


def cli_report(verbose: bool = False, case: str | None = None, json_path: Path | None = None) -> int:
    """Run the command line's campaign; print the counts per command (and each failure with ``verbose``)."""
    import tempfile

    import cli_fuzz

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="effstats-cli-fuzz-") as tmp:
        ws = cli_fuzz.Workspace(Path(tmp) / "ws")
        chosen = [c for c in cli_fuzz.cases() if not case or case in c.name]
        outcomes = cli_fuzz.campaign(ws, chosen, Path(tmp) / "cases")
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for o in outcomes:
        counts[o.command][o.status] += 1
    cols = ("tried",) + cli_fuzz.STATUSES
    print(f"\ncommand line ({len(outcomes)} inputs, {time.perf_counter() - t0:.0f} s)")
    print(f"{'command':<12}" + "".join(f"{c:>10}" for c in cols))
    total: collections.Counter = collections.Counter()
    for cmd in sorted(counts):
        c = counts[cmd]
        c["tried"] = sum(c[k] for k in cli_fuzz.STATUSES)
        total.update(c)
        print(f"{cmd:<12}" + "".join(f"{c[k]:>10}" for k in cols))
    print(f"{'TOTAL':<12}" + "".join(f"{total[k]:>10}" for k in cols))
    print(f"tracebacks {total['traceback'] + total['unclear']}, silent wrong results {total['silent']}, "
          f"valid inputs refused {total['refused']}")
    if verbose:
        for o in outcomes:
            if o.status in cli_fuzz.BAD + ("refused",):
                print(" ", o.line())
    if json_path:
        import json

        with open(json_path, "a") as fh:
            for o in outcomes:
                fh.write(json.dumps({"case": o.case, "module": "cli", "command": o.command, "status": o.status,
                                     "detail": o.detail}) + "\n")
    return int(any(o.status in cli_fuzz.BAD for o in outcomes))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3, help="random variants per bad value (default 3)")
    ap.add_argument("--module", action="append", help="only these modules (repeatable)")
    ap.add_argument("--case", help="only cases whose name contains this")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every crash and garbage result")
    ap.add_argument("--findings", type=Path,
                    help="write <dir>/<module>.md with one line per failing (case, argument, value)")
    ap.add_argument("--json", type=Path,
                    help="also write every outcome (case, module, arg, label, status) as JSON lines")
    ap.add_argument("--memory-gb", type=float, default=8.0,
                    help="address-space limit, so a huge allocation fails instead of swapping")
    ap.add_argument("--cli", action="store_true", help="then run the command line's campaign (tests/cli_fuzz.py)")
    ap.add_argument("--cli-only", action="store_true", help="only the command line's campaign")
    args = ap.parse_args(argv)
    try:
        import resource

        lim = int(args.memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    except (ImportError, ValueError, OSError):
        pass
    if args.cli_only:
        return cli_report(args.verbose, args.case, args.json)
    cases = [c for c in fuzz_cases.cases()
             if (not args.module or c.module in args.module) and (not args.case or args.case in c.name)]
    t0 = time.perf_counter()
    outcomes = fuzz_harness.campaign(cases, range(args.seeds), progress=args.verbose)
    if args.json:
        import json

        with open(args.json, "w") as fh:
            for o in outcomes:
                fh.write(json.dumps({"case": o.case, "module": o.module, "arg": o.arg, "label": o.label,
                                     "status": o.status}) + "\n")
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for o in outcomes:
        counts[o.module][o.status] += 1
    cols = ["tried", "clear", "ok", "crash", "garbage", "skipped"]
    print(f"{'module':<12}" + "".join(f"{c:>9}" for c in cols))
    total: collections.Counter = collections.Counter()
    for mod in sorted(counts):
        c = counts[mod]
        c["tried"] = sum(v for k, v in c.items() if k not in ("tried", "skipped"))
        total.update(c)
        print(f"{mod:<12}" + "".join(f"{c[k]:>9}" for k in cols))
    print(f"{'TOTAL':<12}" + "".join(f"{total[k]:>9}" for k in cols))
    print(f"({len(cases)} callables, {args.seeds} variants per bad value, {time.perf_counter() - t0:.0f} s)")
    bad = [o for o in outcomes if o.status in ("crash", "garbage")]
    # one line per (case, argument, bad value): the variants usually fail the same way
    seen: dict[tuple, fuzz_harness.Outcome] = {}
    for o in bad:
        seen.setdefault((o.case, o.arg, o.label), o)
    if args.verbose:
        for o in seen.values():
            print(" ", o.line())
    skipped = {o.case: o.detail for o in outcomes if o.status == "skipped"}
    for case, why in skipped.items():
        print(f"  skipped {case}: {why}")
    if args.findings:
        args.findings.mkdir(parents=True, exist_ok=True)
        by_mod: dict[str, list] = collections.defaultdict(list)
        for o in seen.values():
            by_mod[o.module].append(o)
        for mod, rows in by_mod.items():
            path = args.findings / f"{mod}.md"
            lines = [f"- `{o.case}({o.arg}={o.value})` [{o.label}]: **{o.status}** -- {o.detail}" for o in rows]
            path.write_text(f"# Bad-input findings for {mod} (scripts/fuzz_report.py, "
                            f"{time.strftime('%H:%M UTC', time.gmtime())})\n\n"
                            "Each line: the call (valid arguments from tests/fuzz_cases.py, one replaced by the bad "
                            "value shown), the bad-value label, "
                            "and what happened. Wanted: a ValueError/TypeError whose message starts with the "
                            "argument's name (or a correct result).\n"
                            "Reproduce one callable: `.venv/bin/python scripts/fuzz_report.py --case '<case>' -v`.\n"
                            "For `rng`/`random_state`: `effstats._validation.check_rng(x, name)` now takes the "
                            "argument name and rejects negative seeds by name.\n\n"
                            + "\n".join(lines) + "\n")
            print(f"wrote {path} ({len(rows)} findings)")
    status = 0 if not bad else 1
    if args.cli:
        status = max(status, cli_report(args.verbose, None, args.json))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
