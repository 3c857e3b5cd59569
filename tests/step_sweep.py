"""A command stopped (SIGINT or SIGKILL) right after each file-system step it takes, for the tests of what it leaves.

:func:`sweep` runs the command once over a copy of a folder, in a process forked for it from one that has imported
what every command imports first (numpy, pandas, scipy.stats, the command line's modules) and run no command (one
such process per list of ``hooks``, kept for the later sweeps of the test process), and forks that process right
after each step (a function of ``hooks`` returning), where the stop comes:

- SIGKILL: no code of the killed process runs after the kill, so what it leaves is the folder as the step left it.
  The folder is copied to ``WORK/<step>`` and a child forked there kills itself (its exit status is recorded) before
  the command goes on: the same moments as a run per step, each reached once instead of once per later step.
- SIGINT: the child forked at the step interrupts itself there and runs the command's own handling of the Ctrl-C
  to its end (its exit status and its stderr, ``WORK/<step>.err``, are recorded) on the folder the command writes
  into, with the files the command holds open there; the folder as the step left it is copied aside first and put
  back for the command to go on once the child has ended, the child's folder kept as ``WORK/<step>``. The child's
  state at the step is the state a process running the command from its start has there: the same steps were taken
  by the same code, and its stderr holds what the command printed before the step. Only the folder's lock file may
  be open in the folder at a step (the child shares its lock with the process it was forked from, which waits for
  it); another open file stops the sweep, since a file the child and the command both wrote through would be one.

The run no signal met leaves the new output in ``WORK/<steps + 1>``. :func:`stopped_once` runs the command as a
fresh ``python -m effstats`` process stopped after one step, to compare with the sweep's moment there: the
command's start-up and its entry point's exit path are that process's. :func:`forked` runs a command by ``main`` in
a child forked from the calling process (a kill at one moment, processes racing for a folder's lock), where neither
the start-up nor the exit path is what a test checks.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import traceback
import warnings
from pathlib import Path
from typing import IO, Callable

PY = sys.executable
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

# the functions (module:name) after whose return a step is counted, wrapped as the module is first imported, before
# the command's modules bind them
_HOOKS = """
import importlib.abc, importlib.machinery, os, signal, sys


def _wrap(module, names, step):
    for name in names:
        setattr(module, name, step(getattr(module, name)))


class _Wrapping(importlib.abc.MetaPathFinder):
    def __init__(self, hooks, step):
        self.hooks, self.step = hooks, step

    def find_spec(self, name, path=None, target=None):
        if name not in self.hooks:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run, names, step = spec.loader.exec_module, self.hooks.pop(name), self.step

        def exec_module(module):
            run(module)
            _wrap(module, names, step)

        spec.loader.exec_module = exec_module
        return spec


def install(hooks, step):
    waiting = {}
    for spec in hooks:
        module, name = spec.split(":")
        if module in sys.modules:
            _wrap(sys.modules[module], [name], step)
        else:
            waiting.setdefault(module, []).append(name)
    sys.meta_path.insert(0, _Wrapping(waiting, step))
"""

_SWEEP = _HOOKS + """
import json, shutil
hooks = json.loads(sys.argv[1])
result, complaint = os.fdopen(os.dup(1), "w"), os.fdopen(os.dup(2), "w")


def fail(message):
    complaint.write(message + "\\n")
    complaint.flush()
    os._exit(3)


def open_here():
    # the files this process holds open in the folder the command writes into, its lock files aside
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if (target == live or target.startswith(live + os.sep)) and os.path.basename(target) != ".effstats.lock":
            out.append(target)
    return out


def step(real):
    def act(*args, **kwargs):
        out = real(*args, **kwargs)
        if steps["child"]:
            return out
        steps["n"] += 1
        at = os.path.join(work, str(steps["n"]))
        if sig == signal.SIGKILL:
            shutil.copytree(live, at, symlinks=True)
            pid = os.fork()
            if pid == 0:
                os.kill(os.getpid(), signal.SIGKILL)
            codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
            return out
        if open_here():
            fail(f"step {steps['n']}: files open in the folder: {open_here()}")
        shutil.copytree(live, aside, symlinks=True)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            steps["child"] = True
            shutil.copyfile(run_err, at + ".err")  # what the command printed before the step
            fd = os.open(at + ".err", os.O_WRONLY | os.O_APPEND)
            os.dup2(fd, 2)
            os.close(fd)
            os.kill(os.getpid(), signal.SIGINT)
            return out
        codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        os.rename(live, at)
        os.rename(aside, live)
        return out
    return act


install(hooks, step)
# what every command imports before it reads its arguments' files, imported once for all the commands swept: each
# command runs in a process forked from here, as a fresh process importing them all would run it
from effstats.cli import main
from effstats.workflow import _cli
import numpy, pandas, scipy.stats

# one sweep a line of input (its jobs, the folder to run them from, the signal), its statuses a line of output; the
# process runs no command itself, so each sweep's commands start from the same state, and it ends with its input
for request in sys.stdin:
    jobs, cwd, sig = json.loads(request)
    sig = getattr(signal, sig)
    for old, work, argv in jobs:
        pid = os.fork()
        if pid == 0:
            os.chdir(cwd)
            live, aside = os.path.join(work, "live"), os.path.join(work, "aside")
            run_err = os.path.join(work, "run.err")
            steps, codes = {"n": 0, "child": False}, []
            shutil.copytree(old, live, symlinks=True)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the requests are this process's own input
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            os.dup2(os.open(run_err, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644), 2)
            code = main([a.replace("{out}", live) for a in argv])
            sys.stdout.flush()
            sys.stderr.flush()
            if steps["child"]:
                os._exit(code)
            if code != 0:
                fail(f"the command no signal met ended with status {code}: {open(run_err).read()}")
            shutil.copytree(live, os.path.join(work, str(steps["n"] + 1)), symlinks=True)
            with open(os.path.join(work, "codes.json"), "w") as f:
                json.dump(codes + [0], f)
            os._exit(0)
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if status != 0:
            fail(f"the sweep of {argv} ended with status {status}")
    result.write(json.dumps([json.load(open(os.path.join(work, "codes.json"))) for _, work, _ in jobs]) + "\\n")
    result.flush()
"""

# the command as ``python -m effstats`` runs it (its entry point reads sys.argv), stopped by the signal sys.argv[1]
# after the step sys.argv[2]
_ONCE = _HOOKS + """
import json
sig, at, hooks = getattr(signal, sys.argv.pop(1)), int(sys.argv.pop(1)), json.loads(sys.argv.pop(1))
count = [0]


def step(real):
    def act(*args, **kwargs):
        out = real(*args, **kwargs)
        count[0] += 1
        if count[0] == at:
            os.kill(os.getpid(), sig)
        return out
    return act


install(hooks, step)
import runpy

runpy.run_module("effstats", run_name="__main__", alter_sys=True)
"""


def sweep(jobs: list[tuple[Path, list[str], Path]], sig: str, hooks: list[str], timeout: float = 900) \
        -> list[list[int]]:
    """Run each command ``argv`` (``{out}`` for the folder) of ``jobs`` (``(old, argv, work)``) over a copy of the
    folder ``old``, stopped by ``sig`` ("SIGINT" or "SIGKILL") right after each step, a return of one of the
    functions ``hooks`` ("module:name"); the folders are ``work/<step>`` and the stopped processes' stderr
    ``work/<step>.err`` (SIGINT). Returns, per job, the exit statuses of the stopped processes and then 0, the run no
    signal met (its folder is ``work/<steps + 1>``)."""
    for _, _, work in jobs:
        work.mkdir(exist_ok=True)
    todo = [[str(old), str(work), [str(a) for a in argv]] for old, argv, work in jobs]
    zygote, complaints = _zygote(hooks)
    zygote.stdin.write(json.dumps([todo, os.getcwd(), sig]) + "\n")
    zygote.stdin.flush()
    if not select.select([zygote.stdout], [], [], timeout)[0]:
        _stop(hooks)
        raise subprocess.TimeoutExpired(zygote.args, timeout)
    line = zygote.stdout.readline()
    if not line:  # a sweep that failed ends the process, saying why
        zygote.wait()
        complaints.seek(0)
        why = complaints.read()
        _stop(hooks)
        raise AssertionError(why)
    return json.loads(line)


# per hooks list, the process the sweeps' commands are forked from (with the file its complaints go to), started at
# the first sweep and kept for the later ones in this process: starting it imports numpy, pandas, scipy.stats and
# the command line's modules
_ZYGOTES: dict[tuple[str, ...], tuple[subprocess.Popen, IO[str]]] = {}


def _zygote(hooks: list[str]) -> tuple[subprocess.Popen, IO[str]]:
    """The process that runs the sweeps of ``hooks`` and the file of its complaints, started if there is none."""
    key = tuple(hooks)
    if key not in _ZYGOTES or _ZYGOTES[key][0].poll() is not None:
        _stop(hooks)
        if not _ZYGOTES:
            atexit.register(lambda: [_stop(list(k)) for k in list(_ZYGOTES)])
        complaints = tempfile.TemporaryFile("w+")
        _ZYGOTES[key] = subprocess.Popen([PY, "-c", _SWEEP, json.dumps(hooks)], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=complaints, text=True, env=ENV), complaints
    return _ZYGOTES[key]


def _stop(hooks: list[str]) -> None:
    """End the process that runs the sweeps of ``hooks``, if any: the end of its input, or a kill if it is stuck."""
    zygote, complaints = _ZYGOTES.pop(tuple(hooks), (None, None))
    if zygote is None:
        return
    zygote.stdin.close()
    try:
        zygote.wait(timeout=10)
    except subprocess.TimeoutExpired:
        zygote.kill()
        zygote.wait()
    zygote.stdout.close()
    complaints.close()


def stopped_once(argv: list[str], sig: str, at: int, hooks: list[str], timeout: float = 300) \
        -> subprocess.CompletedProcess:
    """Run the command ``argv`` as ``python -m effstats`` runs it, in a process of its own, stopped by ``sig`` right
    after its step ``at`` (counted as :func:`sweep` counts them); returns the finished process (text output)."""
    # run by `python -m` itself, whose exit differs from code run under -c (a Ctrl-C caught in code a string exec()
    # runs ends it by SIGINT unless the entry point clears CPython's mark, see effstats._entry)
    env = {k: v for k, v in ENV.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    with tempfile.TemporaryDirectory() as here:
        (Path(here) / "effstats_stopped_once.py").write_text(_ONCE)
        return subprocess.run([PY, "-m", "effstats_stopped_once", sig, str(at), json.dumps(hooks), *argv],
                              capture_output=True, text=True, timeout=timeout, env=env, cwd=here)


def forked(argv: list[str], before: Callable[[], None] | None = None) -> Callable[[], subprocess.CompletedProcess]:
    """Start the command ``argv`` (``effstats.cli.main(argv)``) in a child forked from this process, which has
    imported what the command imports (a fork, not a fresh interpreter that would import numpy, pandas and scipy
    again), ``before()`` called in the child first (a patch that stops it at a moment: :func:`killed_at_rename`);
    returns a function that waits for the child and returns it as a finished process (exit status, text stdout and
    stderr, and its ``pid``)."""
    from effstats.cli import main

    files = []
    for suffix in (".out", ".err"):
        fd, name = tempfile.mkstemp(suffix=suffix)
        os.close(fd)
        files.append(name)
    with warnings.catch_warnings():  # Python 3.12+ warns of fork() in a process with threads: the child runs main
        warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for fd, name in zip((1, 2), files):
                os.dup2(os.open(name, os.O_WRONLY), fd)
            sys.stdout, sys.stderr = open(1, "w", closefd=False), open(2, "w", closefd=False)
            if before is not None:
                before()
            code = main([str(a) for a in argv])
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    def done() -> subprocess.CompletedProcess:
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        out, err = (Path(name).read_text() for name in files)
        for name in files:
            os.unlink(name)
        finished = subprocess.CompletedProcess(argv, code, out, err)
        finished.pid = pid
        return finished
    return done


def killed_at_rename(name: str, *, after: bool = True) -> Callable[[], None]:
    """For :func:`forked`'s ``before``: the process SIGKILLs itself where ``os.replace`` renames a file of the name
    ``name`` into place: once it is renamed, or with ``after=False`` just before (the file written and flushed, not
    yet in place)."""
    def patch() -> None:
        real = os.replace

        def replace(src, dst, *a, **k):
            if not after and os.path.basename(dst) == name:
                os.kill(os.getpid(), signal.SIGKILL)
            real(src, dst, *a, **k)
            if after and os.path.basename(dst) == name:
                os.kill(os.getpid(), signal.SIGKILL)
        os.replace = replace
    return patch
