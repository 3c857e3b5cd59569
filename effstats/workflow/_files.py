"""The files a run owns: which to remove when it is replaced, and a lock while it is being updated.

A selection records the files it wrote in ``manifest.json``, a sequential run in ``state.json`` (``"files"``,
paths relative to the run's folder). Replacing a run (``--force``) removes those of them that are names such a run
writes, and nothing else: a folder the user keeps beside them (the harness's output, a spreadsheet) stays, and so
does a folder the run made once it holds anything else. A record is recognised by its content (its ``format``),
not its name: a folder holding another tool's ``state.json`` or ``manifest.json``, or a file a run would write over
that no run there owns, is refused, with or without ``--force``. A new output is written in full under temporary
names, then put in place with the replaced one's files removed under a journal (:func:`swap_files`) that the next
command completes (:func:`recover`) where a kill cut it short: the folder holds the old output whole or the new
one complete, never a mix. An estimate's report written into a selection's folder is put in place together with the
manifest's new version that lists it (:func:`report_in_manifest`), under the selection's journal.
"""
from __future__ import annotations

import contextlib
import re
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from .._shared import (SWAP, _record_json, exists_or_link, finish_swap, folder_lock, free_folder_lock, pending_swap,
                       recorded_files, remove_staged, swap_files)
from ._io import json_text, output_dir, read_json
from ._names import HELM_INSTANCES, ITEMS_JSON, LM_EVAL_SAMPLES
from ._reference_copy import REFERENCE_CACHE
from ._schema import MANIFEST as MANIFEST_SCHEMA, STATE as STATE_SCHEMA, safe_relative

__all__ = ["KINDS", "owned_files", "remove_files", "refuse_existing", "locked", "safe_relative", "report_in_manifest",
           "pending_state",
           "run_folder", "real_folder", "refuse_report", "report_record", "report_files", "recover", "swap_files"]

# the record file of each kind of run, and what the messages call it
KINDS = {"manifest.json": "a selection", "state.json": "a sequential run"}
# the format field that makes a file a record of effstats' (a file of another tool may share the name)
_FORMATS = {"manifest.json": "effstats.manifest/1", "state.json": "effstats.sequential/1"}
# the files of an estimate's report (effstats estimate writes them into DIR/estimate/<results>/)
REPORT_FILES = ("estimate.csv", "tasks.csv", "estimate.md", "estimate.html")
# the record of the report files an estimate wrote into a folder, and its format: --force replaces only those
REPORT_RECORD = ".effstats_estimate.json"
_REPORT_FORMAT = "effstats.estimate/1"
# the folder of a selection's estimates (effstats estimate's default report folder is REPORTS/<results>/)
REPORTS = "estimate"
# the files each kind of run writes at the top of its folder (a sequential run also writes batch_NNN/...)
_TOP = {"manifest.json": ("manifest.json", LM_EVAL_SAMPLES, HELM_INSTANCES, REFERENCE_CACHE),
        "state.json": ("state.json", "decision.json", "decision.md", "looks.csv", REFERENCE_CACHE,
                       "bank.npz")}  # bank.npz: an adaptive run's item bank (_sequential_adaptive.BANK)
_BATCH_FILES = (LM_EVAL_SAMPLES, HELM_INSTANCES, ITEMS_JSON, "items.csv")
_BATCH = re.compile(r"batch_\d{3,}")  # a sequential run's batch folder: batch_001, batch_002, ...


def _batch_files(d: Path, names: tuple[str, ...]) -> list[str]:
    """``names`` in each batch folder of ``d``, as paths relative to ``d``."""
    return [f"{b.name}/{f}" for b in d.glob("batch_*") if _BATCH.fullmatch(b.name) for f in names]


def _ours(record: str, rel: Any) -> bool:
    """``rel`` is a path inside the run's folder with a name a run of kind ``record`` writes there: the only
    files a record may hand over for removal (a record edited by hand cannot make ``--force`` remove others)."""
    if not safe_relative(rel):
        return False
    parts = PurePosixPath(rel).parts
    if len(parts) == 1 and parts[0] in _TOP[record]:
        return True
    if record == "manifest.json":  # an estimate's report in its default folder, DIR/estimate/<results>/
        return len(parts) == 3 and parts[0] == REPORTS and parts[2] in (*REPORT_FILES, REPORT_RECORD)
    return len(parts) == 2 and _BATCH.fullmatch(parts[0]) is not None and parts[1] in _BATCH_FILES


def owned_files(d: Path, record: str, doc: Any) -> list[str]:
    """The files (relative to ``d``) the run recorded in ``record`` owns: those it lists that a run of its kind
    writes, else (a file written without the list) the names such a run writes."""
    listed = doc.get("files") if isinstance(doc, dict) else None
    if isinstance(listed, list) and listed:
        names = [f for f in listed if _ours(record, f)]
    elif record == "manifest.json":
        names = ["manifest.json", LM_EVAL_SAMPLES, HELM_INSTANCES]
    else:
        names = ["state.json", "decision.json", "decision.md", "looks.csv"]
        names += _batch_files(d, (LM_EVAL_SAMPLES, ITEMS_JSON, "items.csv"))
    return list(dict.fromkeys(names + [record]))


def run_folder(path: Path, record: str) -> Path:
    """The folder of a run given as its folder or as its record file."""
    return path.parent if path.name == record and path.is_file() else path


def report_in_manifest(d: Path, paths: list[Path], selection: Any = None) -> str | None:
    """The text of the manifest of the selection in ``d`` with the report files ``paths`` an estimate writes into
    a report folder of that selection (``estimate/<results>/``) added to its ``files``, for the estimate to put in
    place together with the report: replacing the selection removes them, and no file of the user's that merely
    shares their names (a report written elsewhere with ``--out`` stays). None where the manifest lists them
    already, or ``paths`` are not such files. The caller holds the selection's lock; a ValueError where the
    manifest is no longer that of the ``selection`` the report was computed from (a ``select --force`` replaced it
    while the estimate ran): its report would be filed as the new selection's."""
    if not (d / "manifest.json").is_file() or (d / "manifest.json").is_symlink():
        return None
    root = d.resolve()
    rels = [p.resolve().relative_to(root).as_posix() for p in paths if p.resolve().is_relative_to(root)]
    if not rels or len(rels) < len(paths) or not all(_ours("manifest.json", r) for r in rels):
        return None
    doc = read_json(d / "manifest.json", "directory")
    if not isinstance(doc, dict):
        return None
    if selection is not None and (doc.get("created", "") != selection.created or doc.get("items") != list(
            selection.items) or (doc.get("reference") or {}).get("sha256") != selection.reference.get("sha256")):
        raise ValueError(f"manifest: the selection in {d} was replaced while this estimate ran (select --force); "
                         "its report is not written there: run the estimate again on the new selection")
    files = doc.get("files")
    if not isinstance(files, list) or not files:  # a manifest written without the list: what such a run writes
        files = owned_files(d, "manifest.json", None)
    new = [r for r in rels if r not in files]
    return json_text({**doc, "files": files + new}) if new else None


def report_files(out: Path) -> list[str]:
    """The report files an estimate recorded writing into ``out`` (its ``REPORT_RECORD``, read only where it is a
    file of that format and not a link), the record included; none where there is no such record."""
    return recorded_files(out, REPORT_RECORD, _REPORT_FORMAT, REPORT_FILES)


def report_record(names: Any, results: str | None = None, where: str | None = None,
                  confidence_level: float | None = None) -> str:
    """The text of the record of the report files ``names`` an estimate writes into its folder; ``results``: the
    name of the results it estimated from, where the folder is the default one named after them, ``where``
    their resolved path, and ``confidence_level`` the level of the report's intervals."""
    level = {} if confidence_level is None else {"confidence_level": float(confidence_level)}
    return json_text({"format": _REPORT_FORMAT, "files": list(names), **level,
                      **({"results": results} if results else {}),
                      **({"results_path": where} if results and where else {})})


def refuse_other_results(out: Path, results: str, where: str | None = None) -> None:
    """Refuse to write the report of the results named ``results`` (at the resolved path ``where``) into the
    default report folder ``out`` where it holds the report of other results named alike: ``new.csv`` and
    ``new.parquet``, or a results folder ``new`` (each folder is named by the file's name without its
    extension), or results of the same name in another folder (``llama/out`` and ``mistral/out``; a record
    without the path, of an earlier effstats, is told by the name only)."""
    doc = _record_json(out / REPORT_RECORD, "--out")
    ours = isinstance(doc, dict) and doc.get("format") == _REPORT_FORMAT
    other = doc.get("results") if ours else None
    other_path = doc.get("results_path") if ours else None
    if isinstance(other, str) and other != results:
        raise ValueError(f"--out: {out} holds the report of other results, {other!r}, whose name gives the same "
                         f"folder as {results!r}; name a folder for this report with --out")
    if isinstance(other_path, str) and where is not None and other_path != where:
        raise ValueError(f"--out: {out} holds the report of other results, {other_path!r}, whose name gives the "
                         f"same folder as {where!r}; name a folder for this report with --out")


def refuse_report(out: Path, force: bool, selection: Path | None = None) -> None:
    """Refuse to write an estimate's report into ``out`` over a file of a report's name that no estimate wrote
    there (one the folder's record does not list, nor the manifest of the ``selection`` whose folder holds
    ``out``), with or without ``force``, and over a report an estimate wrote unless ``force``."""
    recover(out)
    if selection is not None:
        recover(selection)
    ours = set(report_files(out))
    if selection is not None:
        rel = out.expanduser().resolve().relative_to(selection.resolve()).as_posix()
        try:
            doc = _record(selection, "manifest.json")
        except ValueError:  # another tool's manifest.json: it lists no report of effstats'
            doc = None
        ours |= {PurePosixPath(f).name for f in owned_files(selection, "manifest.json", doc) if doc is not None
                 and str(PurePosixPath(f).parent) == rel}
    foreign = [n for n in (*REPORT_FILES, REPORT_RECORD) if exists_or_link(out / n) and n not in ours]
    there = [n for n in REPORT_FILES if exists_or_link(out / n)]
    if REPORT_RECORD in foreign:  # the record is what is wrong: say so, not that the report's files are foreign
        raise ValueError(f"--out: {out} holds {REPORT_RECORD}, {_record_problem(out / REPORT_RECORD)}")
    if foreign:
        raise ValueError(f"--out: {out} holds {foreign[0]}, which no effstats estimate wrote there; effstats "
                         "replaces only its own files: remove it, or choose another folder")
    if there and not force:
        raise ValueError(f"--out: {out} already holds a report ({there[0]}); name another folder with --out, or pass "
                         "--force to replace it")


def _record_problem(f: Path) -> str:
    """What makes ``f`` not an estimate's record of its report files (a link, a folder, a file of another format
    or of a newer effstats), and what to do."""
    if f.is_symlink() or not f.is_file():
        return (f"which is {'a link' if f.is_symlink() else 'not a file'}, not an effstats estimate's record; "
                f"effstats replaces only its own files: remove it, or choose another folder")
    try:
        doc = read_json(f, "--out")
    except ValueError:
        doc = None
    found = doc.get("format") if isinstance(doc, dict) else None
    family, _, version = _REPORT_FORMAT.rpartition("/")
    if isinstance(found, str) and found.rpartition("/")[0] == family and found.rpartition("/")[2].isdigit() \
            and int(found.rpartition("/")[2]) > int(version):
        return (f"the record of an estimate written by a newer effstats (format {found!r}; this effstats reads "
                f"{_REPORT_FORMAT!r}): update effstats to replace its report, or choose another folder")
    return (f"which is not an effstats estimate's record (format {_REPORT_FORMAT!r}, a list of files); effstats "
            "replaces only its own files: remove it, or choose another folder")


def _record(d: Path, record: str) -> dict | None:
    """The effstats record ``d/record``, None when there is none; a ValueError when a file of that name is not
    one (another tool's, the user's notes, a damaged file): effstats neither replaces nor removes it."""
    f = d / record
    if not f.exists() and not f.is_symlink():
        return None
    fmt = _FORMATS[record]
    try:
        doc = None if f.is_symlink() else read_json(f, "--out")
    except ValueError:
        doc = None
    required = (MANIFEST_SCHEMA if record == "manifest.json" else STATE_SCHEMA)["required"]
    if not isinstance(doc, dict) or doc.get("format") != fmt or any(k not in doc for k in required):
        raise ValueError(f"--out: {d} holds {record}, which is not an effstats file (format {fmt!r}); effstats "
                         "replaces only its own files: choose another folder")
    return doc


def _clashes(d: Path, record: str, owned: list[str]) -> list[str]:
    """The files of ``d`` a run of kind ``record`` would write over although no effstats run there owns them."""
    names = list(_TOP[record])
    if record == "state.json":
        names += _batch_files(d, _BATCH_FILES)
    return [n for n in names if n not in owned and ((d / n).exists() or (d / n).is_symlink())]


def refuse_existing(out: Any, record: str, force: bool) -> list[str]:
    """Refuse to write a run of kind ``record`` into ``out`` when it holds another run (of another kind always, of
    the same kind unless ``force``), a file of another tool under a record's name, or a file a run would write
    over that no run there owns. Returns the files of the run ``force`` replaces (relative to ``out``): the caller
    removes them with :func:`remove_files` once the new run is written, so that an interrupted replacement leaves
    one whole run."""
    d = Path(out).expanduser()
    recover(d)
    for other, what in KINDS.items():
        try:
            theirs = other != record and _record(d, other) is not None
        except ValueError:  # another tool's file of that name: not a run, and this run leaves it alone
            theirs = False
        if theirs:
            raise ValueError(f"--out: {d} holds {what} ({other}); choose another folder")
    doc = _record(d, record)
    if record == "state.json":  # the new run's first batch goes there
        real_folder(d, "batch_001", "--out", make=False)
    owned = [] if doc is None else owned_files(d, record, doc)
    if doc is not None and record == "manifest.json":  # an estimate's report written into the selection's folder
        owned += [n for n in report_files(d) if n not in owned]
    clash = _clashes(d, record, owned)
    if clash:
        raise ValueError(f"--out: {d} holds {clash[0]}, which no effstats run there wrote; effstats replaces only "
                         "its own files: choose another folder")
    if doc is not None and not force:
        raise ValueError(f"--out: {d} already holds {KINDS[record]} ({record}); choose another folder, or pass "
                         "--force to replace it")
    return owned


def remove_files(d: Path, rels: list[str], keep: Any = ()) -> list[Path]:
    """Remove the files ``rels`` (relative to ``d``, a replaced run's) except those in ``keep`` (the new run's),
    and the folders they leave empty. Only a file in a real folder inside ``d`` goes: a path whose folders
    include a link (which may lead anywhere) or lead outside ``d`` is left alone; a file that is itself a link is
    removed as the link, never its target."""
    removed, parents = [], set()
    for rel in rels:
        if rel in keep or not safe_relative(rel):
            continue
        f = d / rel
        try:
            if _not_real(d, PurePosixPath(rel).parts[:-1]) is not None:
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


def _not_real(d: Path, folders: Any) -> Path | None:
    """The first of ``d/folders[0]``, ``d/folders[0]/folders[1]``, ... that is a link or a file (not a real
    folder), None when each is a real folder or absent."""
    p = d
    for part in folders:
        p = p / part
        if p.is_symlink() or (p.exists() and not p.is_dir()):
            return p
    return None


def real_folder(d: Path, rel: str, name: str, make: bool = True) -> Path:
    """The folder ``d/rel`` a run writes into (made where missing, with ``make``); a ValueError naming ``name``
    when it or a folder on the way is a link or a file: a run writes only into real folders inside its own, never
    through a link to a folder elsewhere."""
    bad = _not_real(d, PurePosixPath(rel).parts)
    if bad is not None:
        raise ValueError(f"{name}: {bad} is {'a link' if bad.is_symlink() else 'a file'}, not a folder; effstats "
                         f"writes only into real folders inside {d}: remove it, or choose another folder")
    if make:
        (d / rel).mkdir(parents=True, exist_ok=True)
    return d / rel


@contextlib.contextmanager
def locked(d: Path, name: str = "directory", wait: float | None = None, create: bool = True) -> Iterator[None]:
    """Hold the lock of the folder ``d`` (:func:`effstats._user_files.folder_lock`, one for every command that writes
    into it), then complete what a killed command left half done there (:func:`recover`): a second process waits
    up to ``wait`` seconds, then is refused with one line naming ``name``. Without ``create``, a folder that does
    not exist is not locked (the command then says what is wrong with it)."""
    if not d.is_dir():
        if not create:
            yield
            return
        output_dir(d, name).mkdir(parents=True, exist_ok=True)  # a folder under a file: one line saying so
    with folder_lock(d, name, wait):
        recover(d, name)
        yield


def recover(d: Path, name: str = "directory") -> None:
    """Complete the output a command ended by a kill was putting in place in ``d`` (:func:`swap_files`), and the
    reports an estimate was putting in place in the report folders ``d/estimate/<results>/`` (real folders, not
    links): the next command finds the new output complete, never beside the old one's files, and no journal is
    left for a later command to complete over a newer selection. Where the completion in ``d`` cannot be done (a
    read-only folder), a ValueError naming ``name`` says so: the folder holds a mix of the two outputs until it is."""
    try:
        finish_swap(d, _written, name)
    except OSError as exc:
        raise ValueError(f"{name}: {d} holds the output of a command stopped midway, half put in place, and "
                         f"completing it failed ({exc.strerror or exc}: {exc.filename}); make the folder writable "
                         "and run again") from None
    reports = Path(d) / REPORTS
    if reports.is_dir() and not reports.is_symlink():
        with contextlib.suppress(OSError):
            for sub in sorted(reports.iterdir()):
                if sub.is_dir() and not sub.is_symlink() and (sub / SWAP).is_file():
                    finish_swap(sub, _written, name)
    # the files a command killed before its journal was written had staged (a reference copy of hundreds of
    # megabytes, say): removed by the next command on the folder, not only by a later run writing the same name
    remove_staged(d, _written)


def recover_unlocked(d: Path) -> None:
    """:func:`recover` for a reader that holds no lock (:meth:`Selection.load`, :meth:`SequentialRun.load`): under
    the folder's lock where no command holds it, so that a journal whose pid another process has taken since is
    completed too; where a command holds it (or no lock file can be made there, a read-only folder), a journal of
    a process still running is left to it."""
    with free_folder_lock(d):
        recover(d)


def pending_state(d: Path) -> tuple[Path, int] | None:
    """The state file a swap a kill cut short in ``d`` is putting in place (the temporary file, written in full)
    and the pid of the process that wrote it, where the next command's :func:`recover` completes that swap; None
    where there is none, or its state is in place already."""
    doc = pending_swap(d, _written)
    tmp = next((Path(d) / t for t, r in (doc or {}).get("rename", []) if r == "state.json"), None)
    return None if tmp is None or not tmp.is_file() else (tmp, doc["pid"])


def _written(rel: Any) -> bool:
    """``rel`` names a file a selection, a sequential run or an estimate's report writes in its folder."""
    return _ours("manifest.json", rel) or _ours("state.json", rel) or (
        safe_relative(rel) and PurePosixPath(rel).name in (*REPORT_FILES, REPORT_RECORD)
        and len(PurePosixPath(rel).parts) in (1, 3))
