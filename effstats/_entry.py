"""The ``effstats`` command's entry point (the console script and ``python -m effstats``), and what its commands do
with a Ctrl-C.

It imports nothing Python has not loaded at start-up, so that a Ctrl-C while the command's modules load (argparse,
numpy, pandas) ends as a later one does: one line on stderr and exit status 130, not a traceback.
"""
from __future__ import annotations

import contextlib
import io
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


def forget_caught_interrupt() -> None:
    """Clear CPython's mark of an unhandled Ctrl-C, which a caught one can leave behind.

    CPython marks a KeyboardInterrupt that ends a string ``exec()`` or ``eval()`` (the code that ``namedtuple`` and
    ``dataclasses`` generate as they define a class, on a module's first import) as unhandled even where a caller
    catches it; ``python -m`` then ends by SIGINT (status -2) instead of with the status returned. Each string
    evaluation clears the mark as it starts, so an empty one forgets it.
    """
    eval("None")


def main(argv: list[str] | None = None) -> int:
    """:func:`effstats.cli.main` (``argv``: the arguments, default ``sys.argv[1:]``), the command line's modules
    imported here, where a Ctrl-C is caught."""
    # Python reports an exception raised where it cannot propagate (a finalizer, a weakref callback) through
    # sys.unraisablehook, prints it as "Exception ignored" and goes on. Two such reports are the Ctrl-C's own: one
    # that lands in a callback importlib runs (its module locks' weakref callbacks) while the command line's modules
    # load, kept here so that the command stops rather than runs to its end; and, in the command's process, the
    # failing finalizers of objects the Ctrl-C left half-built (a progress bar stopped in its constructor), which
    # are held back while the command runs and dropped if it ends interrupted, so that its one line stays the last.
    pressed: list[BaseException] = []
    held: list[str] = []
    python_hook = sys.unraisablehook

    def keep_interrupts(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            pressed.append(unraisable.exc_value)
        elif argv is None:
            hold(unraisable)
        else:
            python_hook(unraisable)

    def hold(unraisable) -> None:
        # the report as text: keeping the object itself could bring one being finalized back to life
        text, stderr = io.StringIO(), sys.stderr
        sys.stderr = text
        try:
            python_hook(unraisable)
        finally:
            sys.stderr = stderr
        held.append(text.getvalue())

    sys.unraisablehook = keep_interrupts
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        pressed.append(KeyboardInterrupt())
    finally:
        sys.unraisablehook = python_hook
    if pressed:
        status = interrupted(sys.argv[1:] if argv is None else argv)
        forget_caught_interrupt()
        return status
    if argv is not None:
        return run(argv)
    sys.unraisablehook = hold
    status = None
    try:
        status = run(argv)
    finally:
        sys.unraisablehook = python_hook
        if status == 130:
            sys.unraisablehook = lambda unraisable: None  # the half-built objects still alive are finalized at exit
        elif held and sys.stderr is not None:
            sys.stderr.write("".join(held))
    import signal  # the command line's process: its status is said; a Ctrl-C while Python exits changes nothing

    with contextlib.suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    forget_caught_interrupt()
    return status


@contextlib.contextmanager
def interrupt_after(kills: bool = False) -> Iterator[None]:
    """Hold a Ctrl-C back until the block ends, then raise it: numpy's C extensions, interrupted while they are
    imported, raise an ImportError with a page of advice instead of the KeyboardInterrupt, and files renamed into
    place together are renamed all or none. With ``kills``, SIGTERM and SIGHUP (a scheduler's or ``timeout``'s
    stop, a closed terminal) are held back too and delivered once the block ends, where they end the process."""
    import signal

    held = [signal.SIGINT] + ([getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
                              if kills else [])
    # started with a signal ignored (Ctrl-C in a background job of a shell, SIGHUP under nohup): it stays ignored
    held = [s for s in held if signal.getsignal(s) is not signal.SIG_IGN]
    pressed: list[int] = []
    old: dict = {}
    try:
        for s in held:
            old[s] = signal.signal(s, lambda number, _: pressed.append(number))
    except ValueError:  # not the main thread: no handler can be set, nor are signals delivered here
        pass
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)  # None: a handler set outside Python
    for s in dict.fromkeys(pressed):
        if s != signal.SIGINT:
            signal.raise_signal(s)  # its own handler now: the default one ends the process
    if signal.SIGINT in pressed:
        raise KeyboardInterrupt
