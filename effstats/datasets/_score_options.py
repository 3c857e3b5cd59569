"""The choices of the score readers' options (``effstats audit --format`` / ``--duplicates``), apart from the readers
so that the command line builds its parser without importing pandas."""

__all__ = ["SCORE_FORMATS", "DUPLICATE_POLICIES"]

#: The layouts :func:`effstats.datasets.read_scores` reads (its ``format``; ``effstats audit --format``).
#:
#: Examples
#: --------
#: >>> from effstats.datasets import SCORE_FORMATS
#: >>> SCORE_FORMATS[:2]
#: ('auto', 'table')
SCORE_FORMATS = ("auto", "table", "helm-json", "openllm-json", "openllm-csv")
#: What :func:`effstats.datasets.read_scores` does with a (model, item) given twice (its ``duplicates``;
#: ``effstats audit --duplicates``).
#:
#: Examples
#: --------
#: >>> from effstats.datasets import DUPLICATE_POLICIES
#: >>> DUPLICATE_POLICIES
#: ('last', 'first', 'mean', 'error')
DUPLICATE_POLICIES = ("last", "first", "mean", "error")
