"""The developers' guide keeps every module of the package under 1,000 lines (a module that would cross it is split
along a seam of its own): checked here, so that a change that crosses it says where."""
from __future__ import annotations

from pathlib import Path

import effstats

LIMIT = 1000


def test_every_module_stays_under_the_limit():
    root = Path(effstats.__file__).parent
    sizes = {p.relative_to(root.parent).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
             for p in root.rglob("*.py")}
    assert len(sizes) > 100
    over = {p: n for p, n in sizes.items() if n >= LIMIT}
    assert not over, f"modules of {LIMIT} lines or more (split them along a seam of their own): {over}"


def test_the_split_modules_keep_their_names():
    """The names of a module split in two are reached where its callers look: the public names, and the private
    ones other modules of the package import."""
    from effstats import _subset
    from effstats.workflow import SequentialRun, _io, _reference_copy, _sequential, content_hash

    assert content_hash is _reference_copy.content_hash
    assert _io.REFERENCE_CACHE == _reference_copy.REFERENCE_CACHE == "reference.npz"
    for name in ("load", "save"):
        assert callable(getattr(SequentialRun, name)) and getattr(SequentialRun, name).__doc__
    assert _sequential.STATE == "state.json"
    for name in ("_as_outputs", "_Outputs", "align_items", "_SubsetEstimator", "select_random"):
        assert hasattr(_subset, name), name
