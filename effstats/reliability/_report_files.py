"""The folder an audit writes its report into: the files it writes there and the record of them (a later audit
replaces only those), the refusal of any other file of those names, and the check that the folder is writable.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from .._shared import exists_or_link, recorded_files, remove_stale_tmp

__all__: list[str] = []


# the files an audit writes into its folder, and the record of those it wrote (only these are ever replaced
# by a later audit: a user's report.md or score table in the folder is refused, with or without force=True, and
# left as it is)
_OUTPUTS = ("report.md", "report.html", "scores.csv", "reliability.csv", "scenarios.csv", "efficiency_scenarios.csv",
            "efficiency_examples.csv", "rank_switch.csv", "rank_intervals.png", "efficiency_scenarios.png",
            "efficiency_examples.png", "rank_switch.png")

_RECORD = ".effstats_audit.json"

_RECORD_FORMAT = "effstats.audit/1"


def _ours(rel: str) -> bool:
    """``rel`` names a file an audit writes in its folder."""
    return rel in _OUTPUTS or rel == _RECORD


def _refuse_foreign(out: Path, names: Any, source: Any = None, foreign: bool = True, force: bool = True) -> list[str]:
    """Refuse to write ``names`` into ``out`` over the audited file ``source``, (``foreign``) over a file that no
    earlier audit recorded writing there (the user's table, a link, another tool's file) and (without ``force``)
    over an earlier audit's report; returns the files the earlier audit owns, which a later audit replaces."""
    owned = recorded_files(out, _RECORD, _RECORD_FORMAT, _OUTPUTS) if out.is_dir() else []
    if isinstance(source, (str, Path)) and Path(source).is_file():
        for n in names:
            f = out / n
            if f.exists() and not f.is_symlink() and f.samefile(source):  # a link is replaced, never written through
                raise ValueError(f"--out: {str(f)!r} is the audited file {str(source)!r}; name another folder with "
                                 "--out")
    found = [n for n in [*names, _RECORD] if exists_or_link(out / n) and n not in owned] if foreign else []
    if found:
        raise ValueError(f"--out: {str(out)!r} holds {found[0]}, which no earlier audit wrote there (its "
                         f"{_RECORD} does not list it); name another folder with --out, or move the file away")
    there = [n for n in owned if n in _OUTPUTS and exists_or_link(out / n)]
    if there and not force:  # as select, estimate and sequential start: a report is replaced only when asked
        first = "report.md" if "report.md" in there else there[0]
        raise ValueError(f"--out: {str(out)!r} already holds an earlier audit's report ({first}); name another "
                         "folder with --out, or pass --force to replace it")
    return owned


_PROBE = "effstats_write_test"  # the file that tries whether --out is writable


def _check_out(out: Path, keep: bool = True) -> Path:
    """``out`` as a writable directory (created); ``keep=False`` removes again the directories it created, so that
    a run refused later (a bad column name, bad scores) leaves nothing behind."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out: {str(out)!r} exists and is not a directory; give a directory for the report")
    made = [p for p in (out, *out.parents) if not p.exists()]
    try:
        out.mkdir(parents=True, exist_ok=True)
        remove_stale_tmp(out / _PROBE)  # a probe a kill left between its creation and its removal
        # never a file of the user's; named with this process's id, as remove_stale_tmp takes a write in progress
        fd, probe = tempfile.mkstemp(prefix=f".{_PROBE}.{os.getpid()}.", suffix=".tmp", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"--out: cannot write to {str(out)!r} ({exc.strerror or exc})") from None
    finally:
        if not keep:
            for p in made:  # deepest first; one another run filled meanwhile stays
                try:
                    p.rmdir()
                except OSError:
                    break
    return out
