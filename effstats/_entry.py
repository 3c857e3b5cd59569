"""The ``effstats`` command's entry point (the console script and ``python -m effstats``), and what its commands do
with a Ctrl-C.

It imports nothing Python has not loaded at start-up, so that a Ctrl-C while the command's modules load (argparse,
numpy, pandas) ends as a later one does: one line on stderr and exit status 130, not a traceback.
"""
from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

# what an interrupted command (Ctrl-C) prints after its name, and the commands named so
INTERRUPTED = "interrupted; files already written are complete, nothing half-written"
COMMANDS = ("audit", "select", "estimate", "sequential start", "sequential update", "sequential status")


def command_name(argv: list[str]) -> str:
    """What a line about the command of the arguments ``argv`` starts with: ``effstats`` and the command, if named
    (``effstats select``, ``effstats sequential start``)."""
    words = [a for a in argv if not str(a).startswith("-")][:2]
    command = " ".join(words if words[:1] == ["sequential"] else words[:1])
    return f"effstats{' ' + command if command in COMMANDS else ''}"


def interrupted(argv: list[str]) -> int:
    """Print the line of a command interrupted before it ran (``argv``: its arguments); return its exit status."""
    print(f"{command_name(argv)}: {INTERRUPTED}", file=sys.stderr)
    return 130


def main(argv: list[str] | None = None) -> int:
    """:func:`effstats.cli.main` (``argv``: the arguments, default ``sys.argv[1:]``), the command line's modules
    imported here, where a Ctrl-C is caught."""
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        return interrupted(sys.argv[1:] if argv is None else argv)
    return run(argv)


@contextlib.contextmanager
def interrupt_after() -> Iterator[None]:
    """Hold a Ctrl-C back until the block ends, then raise it: numpy's C extensions, interrupted while they are
    imported, raise an ImportError with a page of advice instead of the KeyboardInterrupt, and files renamed into
    place together are renamed all or none."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # started with Ctrl-C ignored (a background job of a shell, nohup): it stays ignored throughout
        yield
        return
    pressed: list[int] = []
    try:
        old = signal.signal(signal.SIGINT, lambda *_: pressed.append(1))
    except ValueError:  # not the main thread: no handler can be set, nor is Ctrl-C delivered here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if pressed:
        raise KeyboardInterrupt
