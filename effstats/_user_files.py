"""Files in users' folders, written so that an interrupted or concurrent command never leaves a mix (internal).

A file is written whole under a temporary name and renamed into place (:func:`write_text_atomic`); files replaced
together are staged, named in a journal and renamed at one moment (:func:`swap_files`), a journal a kill left
being completed by the next command (:func:`finish_swap`); one command at a time writes into a folder
(:func:`folder_lock`); the temporary files of a process that no longer runs are removed (:func:`remove_stale_tmp`);
a run replaces only the files its record lists (:func:`recorded_files`); and what is read is a regular file
(:func:`open_regular`: never a FIFO that blocks). Used by :mod:`effstats.workflow` and
:mod:`effstats.reliability`'s reports; :mod:`effstats._shared` gives the same names.
"""
from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path
from typing import Any


def refuse_empty_path(given: Any, name: str, expected: str = "a path", blank: bool = False) -> None:
    """Raise naming ``name`` where ``given``, a path as text (or a path-like object), is empty: ``Path('')`` is the
    current folder, whose every file would be read or written among. ``expected``: what ``name`` takes, in the
    message (``"a folder"``); with ``blank``, a name of white space alone is refused too (an option's value)."""
    text = os.fspath(given) if isinstance(given, (str, os.PathLike)) else None
    if text is not None and not (text.strip() if blank else text):
        raise ValueError(f"{name}: expected {expected}, got an empty name")


def refuse_url(given: Any, name: str, output: bool = False) -> None:
    """Raise naming ``name`` where ``given``, a path that names nothing here, is a URL (``https://…``, ``s3://…``):
    said as given, where a Path would show ``https:/host/…`` as a missing file (or make that folder, for an
    ``output``). A scheme of one letter is a Windows drive (``C://``), not a URL."""
    import re

    text = os.fspath(given) if isinstance(given, (str, os.PathLike)) else None
    if isinstance(text, str) and re.match(r"[A-Za-z][A-Za-z0-9+.-]+://", text) and not os.path.lexists(text):
        raise ValueError(f"{name}: {text!r} is a URL; " + ("effstats writes into a folder on this machine: give one"
                                                           if output else "effstats reads files and folders on this "
                                                           "machine: download it first"))


def _umask() -> int:
    """The process's umask: from /proc on Linux, else read by setting it and putting it back (which, for that
    instant, changes it for every thread)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _tmp_prefix(name: str) -> str:
    return f".{name}."


def remove_stale_tmp(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files an interrupted :func:`write_text_atomic` of ``path`` left beside it.

    A temporary file is ``.<name>.<pid>.<random>.tmp``; it is stale when the process ``<pid>`` no longer runs (a
    write in progress in a live process is left alone). Files of another form (``.<name>.<random>.tmp``) are
    stale when more than a minute old. Returns the files removed.
    """
    import time

    path = Path(path)
    gone = []
    if not path.parent.is_dir():
        return gone
    prefix = _tmp_prefix(path.name)
    journaled: Any = False  # not read yet
    for f in path.parent.iterdir():
        if not (f.name.startswith(prefix) and f.name.endswith(".tmp")):
            continue
        if journaled is False:
            journaled = _journaled(path.parent)
        if journaled is None or os.path.abspath(f) in journaled:  # a staged file of a swap a kill cut short
            continue
        pid = f.name[len(prefix):].split(".", 1)[0]
        try:
            if pid.isdigit():
                if int(pid) != os.getpid() and _alive(int(pid)):
                    continue
            elif time.time() - f.lstat().st_mtime < 60:
                continue
            if f.is_file() or f.is_symlink():
                f.unlink()
                gone.append(f)
        except OSError:  # removed meanwhile, or not ours to remove: leave it
            continue
    return gone


def remove_staged(folder: str | os.PathLike, written: Any) -> None:
    """Remove the files a command killed before its swap journal (:func:`swap_files`) staged in ``folder``: the
    temporary files (:func:`temporary_copy`) of the names ``written(name)`` accepts (the files that command
    writes) and the journal's own, where their process no longer runs (:func:`remove_stale_tmp`); a staged file
    of a name no command writes there, of a live process or that a journal names stays."""
    import re

    staged = re.compile(r"\.(.+)\.[0-9]+\.[^.]+\.tmp")
    with contextlib.suppress(OSError):
        names = {m.group(1) for f in Path(folder).iterdir() if (m := staged.fullmatch(f.name)) and written(m.group(1))}
        for name in sorted(names):
            remove_stale_tmp(Path(folder) / name)
        remove_stale_tmp(Path(folder) / SWAP)  # the journal's own temporary file, where a kill came before its rename


def _journaled(folder: Path) -> set[str] | None:
    """The temporary files (absolute paths) that the swap journals (:func:`swap_files`) in ``folder`` and the two
    folders above it name (a journal names files in the folders below its own): each is a file a killed swap was
    putting in place, kept for the next command to complete that swap with. None (every file) where a journal
    names a key twice: which files it names is unsure until the user keeps one of them."""
    names: set[str] = set()
    p = Path(os.path.abspath(folder))
    for d in (p, *p.parents[:2]):
        try:
            doc = _record_json(d / SWAP)
        except ValueError:
            return None
        pairs = doc.get("rename") if isinstance(doc, dict) else None
        if isinstance(pairs, list):
            names.update(os.path.normpath(d / pair[0]) for pair in pairs
                         if isinstance(pair, list) and pair and isinstance(pair[0], str))
    return names


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):  # another user's process, or no such pid on this system
        return True
    return True


def exists_or_link(p: Path) -> bool:
    """Whether ``p`` names something: a file, a folder or a link (a dangling one too)."""
    return p.exists() or p.is_symlink()


def open_regular(path: str | os.PathLike) -> Any:
    """``open(path, "rb")`` of a regular file only: a FIFO, a device or a folder raises :class:`OSError` at once
    (opened without waiting for a writer, then refused) instead of blocking the reader for ever."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a folder)", str(path))
        if getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def json_loads(text: str) -> Any:
    """``json.loads(text)`` refusing an object that names a key twice (``json`` keeps its last value without a
    word): a :class:`effstats._shared.RepeatedKeyError` whose ``args`` are the key and the line of ``text`` (from 1)
    where that object names it the second time (:func:`repeated_key_said` words it).

    Examples
    --------
    >>> json_loads('{"a": 1}')
    {'a': 1}
    >>> json_loads('{"a": {"b": 1},\\n "a": 2}')
    Traceback (most recent call last):
    effstats._shared.RepeatedKeyError: ('a', 2)
    """
    import json

    from ._shared import RepeatedKeyError, json_object

    try:
        return json.loads(text, object_pairs_hook=json_object)
    except RepeatedKeyError as exc:
        raise RepeatedKeyError(exc.args[0], _repeat_line(text, exc.args[0])) from None


def repeated_key_said(exc: Exception, advice: str = "keep one of them") -> str:
    """What the :class:`effstats._shared.RepeatedKeyError` of :func:`json_loads` says, after the file's name, ending
    with ``advice``: what to do."""
    from ._shared import _plain  # a key of thousands of characters is cut

    line = f"line {exc.args[1]} " if len(exc.args) > 1 and exc.args[1] else ""
    return f"{line}names the key {_plain(exc.args[0])!r} twice in one object (a hand edit?); {advice}"


# what to do with a swap journal naming a key twice: which of its lists effstats wrote is unknown, so the swap it
# records cannot be completed; without the journal the folder keeps its files as they are
_JOURNAL_ADVICE = ("it is the journal of a command killed while putting its files in place: check the folder's "
                   "files, remove the journal, and run that command again (with --force where it asks) if they are "
                   "incomplete")


def _repeat_line(text: str, key: str) -> int | None:
    """The line where the object of ``text`` that ``json_object`` refuses (the first to end naming a key twice)
    names ``key`` the second time: found by json's pure-Python parser, which tells where each object starts, and
    a walk over that object's pairs (an error's path only: it parses the text again, slowly)."""
    import json.decoder
    import json.scanner

    class _At(Exception):
        pass

    def parse_object(s_and_end: tuple, strict: bool, scan_once: Any, object_hook: Any, pairs_hook: Any,
                     memo: Any = None) -> Any:
        def hook(pairs: list) -> dict:
            if len({k for k, _ in pairs}) != len(pairs):
                raise _At(s_and_end[1])
            return dict(pairs)
        return json.decoder.JSONObject(s_and_end, strict, scan_once, None, hook, memo)

    dec = json.JSONDecoder()
    dec.parse_object = parse_object
    ws = json.decoder.WHITESPACE.match
    try:
        json.scanner.py_make_scanner(dec)(text, ws(text, 0).end())
        return None
    except _At as at:
        i = ws(text, at.args[0]).end()  # the object's first key, past its '{'
    except (ValueError, StopIteration, RecursionError):
        return None
    value = json.scanner.make_scanner(json.JSONDecoder())
    seen = set()
    while text[i:i + 1] == '"':
        k, end = json.decoder.scanstring(text, i + 1)
        if k == key and k in seen:
            return text.count("\n", 0, i) + 1
        seen.add(k)
        _, end = value(text, ws(text, ws(text, end).end() + 1).end())  # past the ':', the value
        i = ws(text, ws(text, end).end() + 1).end()  # past the ',' to the next key
    return None


def _record_json(f: Path, name: str = "directory") -> Any:
    """The JSON of the record file ``f`` (a run's record of its files, a swap journal); None where it is missing,
    a link (it may name any file) or unreadable. A record naming a key twice (a hand edit: which of its lists is
    the one effstats wrote?) is a ValueError naming ``name``, the file, the line and the key."""
    from ._shared import RepeatedKeyError

    try:
        if f.is_symlink():
            return None
        with open_regular(f) as fh:
            return json_loads(fh.read().decode("utf-8"))
    except RepeatedKeyError as exc:
        advice = _JOURNAL_ADVICE if f.name == SWAP else "keep one of them"
        raise ValueError(f"{name}: {f} {repeated_key_said(exc, advice)}") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


def recorded_files(folder: Path, record: str, fmt: str, known: Any, name: str = "--out") -> list[str]:
    """The files a record ``folder/record`` of format ``fmt`` lists among the ``known`` names a run writes (in the
    record's order, each once), the record itself last; none where the record is missing, a link (it may name any
    file), unreadable or not of that format: a run replaces or removes only what such a record says it wrote.
    A record naming a key twice is a ValueError naming ``name``."""
    doc = _record_json(folder / record, name)
    if not isinstance(doc, dict) or doc.get("format") != fmt or not isinstance(doc.get("files"), list):
        return []
    return list(dict.fromkeys(n for n in doc["files"] if n in known)) + [record]


def write_text_atomic(path: str | os.PathLike, text: str | bytes) -> Path:
    """Write ``text`` (or bytes) to a temporary file beside ``path``, flush it to disk, then rename it over ``path``.

    An interrupted run leaves either the previous file or the new one, never a half-written file; the temporary
    files an interrupted write left are removed by the next write of ``path``. The file gets the permissions a
    plain ``open(path, "w")`` gives (``0o666`` less the umask).
    """
    return put_in_place(temporary_copy(path, text), Path(path))


def put_in_place(tmp: Path, path: Path) -> Path:
    """Rename the temporary file ``tmp`` (:func:`temporary_copy`) over ``path``: the second half of
    :func:`write_text_atomic`; ``tmp`` is removed where the rename fails."""
    try:
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):  # name the file written, not the temporary one (a folder of that name, say)
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    return path


def temporary_copy(path: str | os.PathLike, text: str | bytes) -> Path:
    """Write ``text`` (or bytes) to a temporary file beside ``path``, flushed to disk, and return its name: the
    first half of :func:`write_text_atomic`, for a caller that renames several files into place at one moment.
    A temporary file its process left behind is removed by the next write of ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_tmp(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{_tmp_prefix(path.name)}{os.getpid()}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # a read-only folder: name the file written, not the temporary name tried
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes the file 0600: give it the user's usual permissions
        binary = isinstance(text, bytes)
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:  # a full disk: name the file written, not stdout
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    return Path(tmp)


# the lock of a folder a command writes into (select, sequential start and update, estimate, audit): one lock file
# for every command, so that no two of them write into one folder at once, whatever their kinds
LOCK = ".effstats.lock"
LOCK_WAIT = 60.0  # seconds a command waits for another one's lock on its folder before it is refused
# the real paths of the folders whose lock this process holds (each with its count of holds): a swap journal in such a
# folder or below is a killed process's, whatever its pid says (a pid is reused, after a restart above all), since
# every command that writes one holds the lock until the journal is gone
_HELD: dict[str, int] = {}


@contextlib.contextmanager
def folder_lock(d: Path, name: str, wait: float | None = None) -> Any:
    """Hold the exclusive lock of the existing folder ``d`` (``d/.effstats.lock``): a second process waits up to
    ``wait`` seconds (:data:`LOCK_WAIT` where None), then is refused with one line naming ``name`` (the argument
    that gave ``d``). Without flock (Windows) nothing is locked."""
    try:
        import fcntl
    except ImportError:  # no flock on this system: commands are not guarded against one another
        yield
        return
    import time

    lock = Path(d) / LOCK
    try:  # never through a link: it would make and lock a file wherever it points
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError as exc:
        if lock.is_symlink():
            raise ValueError(f"{name}: {lock} is a link; effstats locks a file of its own in the folder, never "
                             "where a link points: remove it") from None
        raise ValueError(f"{name}: cannot lock {d} ({exc.strerror})") from None
    try:
        deadline = time.monotonic() + (LOCK_WAIT if wait is None else wait)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ValueError(f"{name}: another effstats command is writing into {d} ({LOCK} is held); run "
                                     "this one when it has finished") from None
                time.sleep(0.1)
        real = os.path.realpath(d)
        _HELD[real] = _HELD.get(real, 0) + 1
        try:
            yield
        finally:
            _HELD[real] -= 1
            if not _HELD[real]:
                del _HELD[real]
    finally:
        os.close(fd)  # closing the file releases the lock


@contextlib.contextmanager
def free_folder_lock(d: Path) -> Any:
    """The lock of the folder ``d`` (:func:`folder_lock`) where it can be taken at once, for work a command may do
    before it waits for the lock (a reader, a check before a long computation): yields True while held, False
    where it is not taken: ``d`` is not a folder, this process holds it (or a folder's above) already, another
    process holds it, or no lock file can be made there (a read-only folder)."""
    with contextlib.ExitStack() as stack:
        held = False
        if Path(d).is_dir() and not _lock_held(d):
            with contextlib.suppress(ValueError):
                stack.enter_context(folder_lock(d, "directory", wait=0))
                held = True
        yield held


def _lock_held(folder: Path) -> bool:
    """Whether this process holds the lock of ``folder`` or of a folder above it (:func:`folder_lock`)."""
    real = os.path.realpath(folder)
    return any(real == h or real.startswith(h.rstrip(os.sep) + os.sep) for h in _HELD)


# the journal of a set of files being put in place together (:func:`swap_files`), in the folder they go into
SWAP = ".effstats_swap.json"
_SWAP_FORMAT = "effstats.swap/1"


def swap_files(folder: Path, files: list[tuple[Path, str | bytes | Path]], remove: Any = ()) -> None:
    """Put ``files`` (path inside ``folder``, text or bytes) in place together, in their order, and remove the
    files ``remove`` (paths relative to ``folder`` of the output they replace): a kill at any moment leaves the
    old files whole or, once :func:`finish_swap` has run, the new ones complete, never a mix.

    Each file is first written in full under a temporary name beside its own, or is given as that temporary file
    already written (a ``Path`` :func:`temporary_copy` returned for it: a large file written once, by its maker,
    which the swap owns from the call on); an interruption removes them, a kill leaves them to the next write's
    clean-up. Then a journal (``folder/.effstats_swap.json``, written
    atomically) names the renames and removals, which follow, the last file (a run's record) renamed last, and
    the journal goes. A journal a killed process left is completed by the next command's :func:`finish_swap`.
    Ctrl-C, SIGTERM and SIGHUP are held back from the journal's write to its removal."""
    import json

    from ._entry import interrupt_after

    folder = Path(folder)
    given = [text for _, text in files if isinstance(text, Path)]  # removed with the others if the swap fails
    staged: list[tuple[Path, Path]] = []
    done = False
    try:
        for path, text in files:
            if isinstance(text, Path) and Path(os.path.abspath(text)).parent != Path(os.path.abspath(path)).parent:
                raise ValueError(f"{text} is not a temporary file beside {path}")
            staged.append((text if isinstance(text, Path) else temporary_copy(path, text), Path(path)))
        for _, path in staged:  # a rename that would fail: refused while nothing has moved
            if path.is_dir() and not path.is_symlink():
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        rel = [[(f.relative_to(folder).parent / tmp.name).as_posix(), f.relative_to(folder).as_posix()]
               for tmp, f in staged]
        doc = {"format": _SWAP_FORMAT, "pid": os.getpid(), "rename": rel,
               "remove": [r for r in dict.fromkeys(remove) if r not in {f for _, f in rel}]}
        with interrupt_after(kills=True):
            write_text_atomic(folder / SWAP, json.dumps(doc, indent=1) + "\n")
            done = True
            _complete(folder, doc)
    finally:
        if not done:
            for tmp in dict.fromkeys([*given, *(t for t, _ in staged)]):
                tmp.unlink(missing_ok=True)


def finish_swap(folder: Path, known: Any, name: str = "directory") -> None:
    """Complete the swap of files a process ended by a kill left half done in ``folder`` (its journal, see
    :func:`swap_files`), where each file it names is one ``known(relative path)`` says such an output writes; a
    journal of a process still running (unless this process holds the folder's lock), a link, one naming any other
    file, or one renaming a file in a folder that is a link (or a file) is left alone. A journal naming a key twice
    is a ValueError naming ``name``."""
    doc = pending_swap(folder, known, name)
    if doc is not None:
        _complete(Path(folder), doc)


def pending_swap(folder: Path, known: Any, name: str = "directory") -> dict | None:
    """The journal of a swap a process ended by a kill left half done in ``folder``, as :func:`finish_swap`
    completes it (None where there is none to complete: see there). Where this process holds the folder's lock
    the journal's process has ended, whatever runs under its pid now."""
    doc = _record_json(Path(folder) / SWAP, name)
    if not isinstance(doc, dict) or doc.get("format") != _SWAP_FORMAT or not isinstance(doc.get("pid"), int) \
            or (doc["pid"] != os.getpid() and not _lock_held(folder) and _alive(doc["pid"])):
        return None
    pairs, gone = doc.get("rename"), doc.get("remove")
    if not (isinstance(pairs, list) and isinstance(gone, list)
            and all(isinstance(p, list) and len(p) == 2 and all(isinstance(r, str) for r in p) for p in pairs)
            and all(isinstance(r, str) for r in gone)):
        return None
    # a temporary file goes only onto the name it is the temporary of, in the same folder, a real one inside
    # ``folder``: never through a link (to a folder elsewhere) on the way
    from .workflow._files import _not_real
    from .workflow._schema import safe_relative

    ok = all(known(r) and safe_relative(r) for _, r in pairs) and all(known(r) and safe_relative(r) for r in gone) \
        and all(safe_relative(t) and Path(t).parent == Path(r).parent
        and Path(t).name.startswith(f"{_tmp_prefix(Path(r).name)}{doc['pid']}.") and t.endswith(".tmp")
        and _not_real(Path(folder), Path(r).parts[:-1]) is None for t, r in pairs)
    return doc if ok else None


def _complete(folder: Path, doc: dict) -> None:
    """The renames and removals of the journal ``doc`` not done yet (a rename whose temporary file is gone is
    done), the last rename after the removals, then the journal's removal. Where the last temporary file is gone,
    the swap had reached its last rename, after its removals: nothing is removed again."""
    from .workflow._files import remove_files  # only through real folders inside ``folder``, never a link's target

    pairs = doc["rename"]
    for k, (tmp, rel) in enumerate(pairs):
        if k == len(pairs) - 1 and (folder / tmp).is_file():
            remove_files(folder, doc["remove"])
        if (folder / tmp).is_file():
            try:
                os.replace(folder / tmp, folder / rel)
            except OSError as exc:  # name the file written, not the temporary one
                raise OSError(exc.errno, exc.strerror, str(folder / rel)) from exc
    if not pairs:
        remove_files(folder, doc["remove"])
    (folder / SWAP).unlink(missing_ok=True)
