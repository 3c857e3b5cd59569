"""Does the hypothesis test of a repeated key's line still find the bugs it is for? Breaks
``effstats._user_files._repeat_line`` in four plausible ways and runs
``test_the_line_of_a_repeated_key_is_that_of_its_second_occurrence`` against the real search and each broken one,
under several hypothesis seeds: how many seeds find each bug, and the CPU seconds they take.

The broken searches (each made from the real source by one textual change, or a text search):

* ``first_occurrence``: the line of the key's first occurrence in the object, not of the second;
* ``raw_key``: the key compared as the text writes it (escapes and all), not as JSON reads it;
* ``line_skip``: a value skipped to the end of its line (wrong where a value is an object over several lines);
* ``text_search``: the second place the text writes the key, in whatever object.

Usage (from the checkout, or with ``--tests`` naming another checkout's tests folder to compare its version)::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/repeated_key_mutants.py --seeds 5
"""
from __future__ import annotations

import argparse
import inspect
import json
import re
import resource
import textwrap
from pathlib import Path

import pytest

import effstats._user_files as U

REAL = U._repeat_line
# (what the real source says, what the broken one says instead)
CHANGES = {
    "first_occurrence": ("if k == key and k in seen:", "if k == key:"),
    "raw_key": ("k, end = json.decoder.scanstring(text, i + 1)",
                "k, end = json.decoder.scanstring(text, i + 1); k = text[i + 1:end - 1]"),
    "line_skip": ("_, end = value(text, ws(text, ws(text, end).end() + 1).end())",
                  "end = text.find(chr(10), end) if chr(10) in text[end:] else len(text); end -= 1"),
}


def _broken(name: str):
    old, new = CHANGES[name]
    src = textwrap.dedent(inspect.getsource(REAL))
    if src.count(old) != 1:
        raise SystemExit(f"{name}: the real search no longer says {old!r}: update the mutant")
    namespace = dict(vars(U))
    exec(compile(src.replace(old, new), f"<{name}>", "exec"), namespace)
    return namespace["_repeat_line"]


def text_search(text: str, key: str) -> int | None:
    hits = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
    return text.count("\n", 0, hits[1]) + 1 if len(hits) > 1 else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--tests", default=str(Path(__file__).resolve().parents[1] / "tests"))
    args = ap.parse_args()
    searches = {"real": REAL, **{name: _broken(name) for name in CHANGES}, "text_search": text_search}
    for name, fn in searches.items():
        U._repeat_line = fn
        before = resource.getrusage(resource.RUSAGE_SELF)
        found = sum(pytest.main(["-qq", "-p", "no:cacheprovider", "-x", "-W", "ignore", "--no-header",
                                 f"{args.tests}/test_json_repeated_keys.py", "-k", "second_occurrence",
                                 f"--hypothesis-seed={seed}"]) != 0 for seed in range(args.seeds))
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        print(f"{name}: the test failed on {found} of {args.seeds} seeds ({cpu:.1f} CPU s)", flush=True)
    U._repeat_line = REAL


if __name__ == "__main__":
    main()
