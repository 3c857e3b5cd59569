"""The lm-eval cache's batches of saves (``_lm_eval_cache.batch``) opened in several threads at once: the copies
saved while any batch is open are pruned once, when the last one closes, whatever the order in which the threads
open and close theirs."""
from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from effstats.datasets import _lm_eval_cache as cache

STAMP = (cache.MIN_BYTES, 0, 1, 0)  # a file large enough to keep, modified long ago


@pytest.fixture
def pruned(tmp_path, monkeypatch):
    """The cache in ``tmp_path``, copies not written (only where they would be), each prune noted as (folder,
    copies kept)."""
    monkeypatch.setenv("EFFSTATS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_write", lambda path, arrays: None)
    calls: list[tuple[Path, frozenset]] = []
    lock = threading.Lock()

    def prune(folder, keep):
        with lock:
            calls.append((folder, frozenset(keep)))
    monkeypatch.setattr(cache, "_prune", prune)
    return calls


def _copy(name: str) -> Path:
    """Where the copy of the samples file ``name`` is kept."""
    return cache._entry(Path(name), ("acc",))[0]


def _save(name: str) -> Path:
    cache.save(Path(name), ("acc",), STAMP, [], [])
    return _copy(name)


def test_a_batch_outliving_another_threads_batch_still_defers_its_prunes(pruned):
    # thread A opens a batch, thread B opens one, A closes, B saves two copies then closes: B's copies are pruned
    # once, when B's batch closes, not one prune a copy
    steps = {k: threading.Event() for k in ("a_open", "b_open", "a_closed")}
    during_b: list[int] = []
    errors: list[BaseException] = []

    def a():
        try:
            with cache.batch():
                steps["a_open"].set()
                steps["b_open"].wait(10)
            steps["a_closed"].set()
        except BaseException as exc:  # noqa: BLE001 (reported by the test below)
            errors.append(exc)

    def b():
        try:
            steps["a_open"].wait(10)
            with cache.batch():
                steps["b_open"].set()
                steps["a_closed"].wait(10)
                _save("x.jsonl"), _save("y.jsonl")
                during_b.append(len(pruned))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=f) for f in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    assert during_b == [0]  # A's close pruned nothing (it saved nothing); B's saves waited for B's close
    assert pruned == [(_copy("x.jsonl").parent, frozenset({_copy("x.jsonl"), _copy("y.jsonl")}))]
    _assert_no_batch_open(pruned)


def _assert_no_batch_open(pruned):
    """A copy saved now is pruned at once, as outside any batch."""
    n = len(pruned)
    saved = _save("after.jsonl")
    assert pruned[n:] == [(saved.parent, frozenset({saved}))]


def test_nested_batches_in_one_thread_prune_once_at_the_outer_ones_end(pruned):
    with cache.batch():
        with cache.batch():
            first = _save("x.jsonl")
        assert pruned == []
        second = _save("y.jsonl")
    assert pruned == [(first.parent, frozenset({first, second}))]
    _assert_no_batch_open(pruned)


def test_batches_opened_and_closed_by_many_threads_at_once_lose_no_copy_and_raise_nothing(pruned):
    # threads switched every microsecond, each opening and closing batches and saving inside and outside them:
    # no error, every copy saved inside a batch kept by some prune, and no batch state left once all are closed
    saved: list[Path] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(k):
        try:
            for i in range(150):
                if i % 3:
                    with cache.batch():
                        p = _save(f"t{k}-{i}.jsonl")
                        with lock:
                            saved.append(p)
                else:
                    _save(f"t{k}-{i}.jsonl")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        sys.setswitchinterval(interval)
    assert not errors
    kept = set().union(*(keep for _, keep in pruned))
    assert set(saved) <= kept
    _assert_no_batch_open(pruned)
