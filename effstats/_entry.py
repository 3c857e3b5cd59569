"""The ``effstats`` command's entry point (the console script and ``python -m effstats``).

It imports nothing itself, so that a Ctrl-C while the command's modules load (argparse, numpy, pandas) ends as a
later one does: one line on stderr and exit status 130, not a traceback.
"""
from __future__ import annotations

import sys

# what an interrupted command (Ctrl-C) prints after its name, and the commands named so
INTERRUPTED = "interrupted; files already written are complete, nothing half-written"
COMMANDS = ("audit", "select", "estimate", "sequential start", "sequential update", "sequential status")


def interrupted(argv: list[str]) -> int:
    """Print the line of a command interrupted before it ran (``argv``: its arguments); return its exit status."""
    words = [a for a in argv if not str(a).startswith("-")][:2]
    command = " ".join(words if words[:1] == ["sequential"] else words[:1])
    print(f"effstats{' ' + command if command in COMMANDS else ''}: {INTERRUPTED}", file=sys.stderr)
    return 130


def main(argv: list[str] | None = None) -> int:
    """:func:`effstats.cli.main` (``argv``: the arguments, default ``sys.argv[1:]``), the command line's modules
    imported here, where a Ctrl-C is caught."""
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        return interrupted(sys.argv[1:] if argv is None else argv)
    return run(argv)
