"""The files a run owns: which to remove when it is replaced, and a lock while it is being updated.

A selection records the files it wrote in ``manifest.json``, a sequential run in ``state.json`` (``"files"``,
paths relative to the run's folder). Replacing a run (``--force``) removes those files and nothing else: a
folder the user keeps beside them (the harness's output, a spreadsheet) stays, and so does a folder the run made
once it holds anything else.
"""
from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path
from typing import Any, Iterator

from ._io import output_dir, read_json, write_json_atomic
from ._schema import safe_relative

__all__ = ["KINDS", "owned_files", "remove_run", "refuse_existing", "locked", "safe_relative", "record_report",
           "run_folder"]

# the record file of each kind of run, and what the messages call it
KINDS = {"manifest.json": "a selection", "state.json": "a sequential run"}
# the files of an estimate's report (effstats estimate writes them into DIR/estimate/<results>/)
REPORT_FILES = ("estimate.csv", "tasks.csv", "estimate.md", "estimate.html")


def owned_files(d: Path, record: str, doc: Any) -> list[str]:
    """The files (relative to ``d``) the run recorded in ``record`` owns: those it lists, else (a file written
    without the list) the names such a run writes."""
    listed = doc.get("files") if isinstance(doc, dict) else None
    if isinstance(listed, list) and listed:
        names = [f for f in listed if safe_relative(f)]
    elif record == "manifest.json":
        names = ["manifest.json", "lm_eval_samples.json", "helm_instances.json"]
    else:
        names = ["state.json", "decision.json", "decision.md", "looks.csv"]
        names += [f"{b.name}/{f}" for b in d.glob("batch_*") if re.fullmatch(r"batch_\d{3,}", b.name)
                  for f in ("lm_eval_samples.json", "items.csv")]
    return list(dict.fromkeys(names + [record]))


def run_folder(path: Path, record: str) -> Path:
    """The folder of a run given as its folder or as its record file."""
    return path.parent if path.name == record and path.is_file() else path


def record_report(d: Path, paths: list[Path]) -> None:
    """Add the report files ``paths`` an estimate wrote inside the selection's folder ``d`` to its manifest's
    ``files`` (replacing the selection removes them, and no file of the user's that merely shares their names).
    The caller holds the selection's lock."""
    if not (d / "manifest.json").is_file():
        return
    root = d.resolve()
    rels = [str(p.resolve().relative_to(root)) for p in paths if p.resolve().is_relative_to(root)]
    doc = read_json(d / "manifest.json", "directory")
    if not rels or not isinstance(doc, dict):
        return
    files = doc.get("files")
    if not isinstance(files, list) or not files:  # a manifest written without the list: what such a run writes
        files = owned_files(d, "manifest.json", None)
    new = [r for r in rels if r not in files and safe_relative(r)]
    if new:
        write_json_atomic(d / "manifest.json", {**doc, "files": files + new})


def remove_run(d: Path, record: str) -> list[Path]:
    """Remove the files of the run whose record is ``d/record``, and the folders they leave empty."""
    try:
        doc = read_json(d / record, "directory")
    except ValueError:  # a damaged record: the names such a run writes
        doc = None
    root = d.resolve()
    removed, parents = [], set()
    for rel in owned_files(d, record, doc):
        f = d / rel
        try:
            if not f.resolve().is_relative_to(root) and not f.is_symlink():
                continue
            if f.is_symlink() or f.is_file():
                f.unlink()
                removed.append(f)
                parents.update(p for p in f.parents if p != d and d in p.parents)
        except OSError:
            continue
    for p in sorted(parents, key=lambda q: len(q.parts), reverse=True):
        with contextlib.suppress(OSError):
            p.rmdir()  # only when empty
    return removed


def refuse_existing(out: Any, record: str, force: bool, remove: bool = True) -> None:
    """Refuse to write a run of kind ``record`` into ``out`` when it holds another run: of another kind always,
    of the same kind unless ``force`` (then, with ``remove``, remove that run's own files)."""
    d = Path(out).expanduser()
    for other, what in KINDS.items():
        if other != record and (d / other).exists():
            raise ValueError(f"--out: {d} holds {what} ({other}); choose another folder")
    if not (d / record).exists():
        return
    if not force:
        raise ValueError(f"--out: {d} already holds {KINDS[record]} ({record}); choose another folder, or pass "
                         "--force to replace it")
    if remove:
        remove_run(d, record)


@contextlib.contextmanager
def locked(d: Path, name: str = "state.json", wait: float = 60.0, create: bool = True) -> Iterator[None]:
    """Hold an exclusive lock on the run in ``d`` (a lock file ``.<name>.lock`` beside it): a second process
    waits up to ``wait`` seconds, then is refused with one line. Without ``create``, a folder that does not exist
    is not locked (the command then says what is wrong with it)."""
    try:
        import fcntl
    except ImportError:  # no flock on this system (Windows): runs are not guarded against concurrent updates
        yield
        return
    if not d.is_dir():
        if not create:
            yield
            return
        output_dir(d).mkdir(parents=True, exist_ok=True)  # a folder under a file: one line saying so
    try:
        fd = os.open(d / f".{name}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise ValueError(f"directory: cannot lock the run in {d} ({exc.strerror})") from None
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ValueError(f"directory: another effstats command is updating the run in {d} "
                                     f"(.{name}.lock is held); run this one when it has finished") from None
                time.sleep(0.1)
        yield
    finally:
        os.close(fd)  # closing the file releases the lock
