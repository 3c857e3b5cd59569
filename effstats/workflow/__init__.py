"""From harness logs to a decision: the evaluation loop a model developer runs.

1. :func:`select` reads the reference models' per-item results (lm-evaluation-harness sample logs, HELM runs,
   a CSV/Parquet table or a :class:`~effstats.responses.ResponseMatrix`) and chooses the items to evaluate a new
   model on; :meth:`Selection.save` writes ``manifest.json`` and lm-eval's ``--samples`` file.
2. The harness runs the new model on those items only
   (``lm_eval ... --samples DIR/lm_eval_samples.json --log_samples --output_path OUT``).
3. :func:`estimate` reads the results back (matched by item id), refits deterministically from the reference
   data and returns the new model's score with an interval and its rank among the reference models with a
   rank interval (:class:`Estimate`).
4. Or :class:`SequentialRun` hands out batches of items until a group-sequential stopping rule decides
   (efficacy against a reference model, or a precision target), with repeated confidence intervals.

The command line does the same: ``effstats select``, ``effstats estimate``, ``effstats sequential start|update|status``.
"""
from __future__ import annotations

import importlib as _importlib
import typing as _typing

from ._names import METHODS

del annotations  # the __future__ import's binding, not a name of the package (dir() lists its API)

if _typing.TYPE_CHECKING:  # for type checkers and IDEs; at run time these load on first use (see __getattr__)
    from ._estimate import Estimate, estimate
    from ._io import read_results
    from ._reference_copy import content_hash
    from ._lm_eval_writer import write_lm_eval_samples
    from ._select import Selection, neyman_shares, select
    from ._sequential import SequentialRun
    from ._tasks import allocate_budget

__all__ = ["select", "estimate", "Selection", "Estimate", "SequentialRun", "read_results", "content_hash",
           "allocate_budget", "neyman_shares", "write_lm_eval_samples", "METHODS"]
# the names above and the submodule that defines each
_EXPORTS = {"select": "_select", "Selection": "_select", "estimate": "_estimate", "Estimate": "_estimate",
            "SequentialRun": "_sequential", "read_results": "_io", "content_hash": "_reference_copy",
            "allocate_budget": "_tasks", "neyman_shares": "_select", "write_lm_eval_samples": "_lm_eval_writer"}


def __getattr__(name: str):
    # The command line imports this package for its subcommands' parsers (_cli): the fits, with pandas,
    # SciPy and scikit-learn, load on first use, so that `effstats --help` and `effstats audit` do not pay for them.
    if name in _EXPORTS:
        return getattr(_importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'effstats.workflow' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the API and the module's dunders; not its private helpers nor the submodules loaded so far
    return sorted({n for n in globals() if n.startswith("__")} | set(__all__) | set(_EXPORTS))
