"""Command line: ``effstats audit SCORES [--format ...] [--scenarios ...] [--aggregate ...] [--duplicates ...]
[--out DIR]``.

Writes a short benchmark-reliability report (``report.md`` + ``report.html`` + PNG figures + CSV tables)
following Perlitz et al., "Efficient Benchmarking (of Language Models)" (NAACL 2024): what to add or drop,
which rank differences are resolved, DIoR of scenarios (and examples), and the Mean Win Rate's sensitivity.

Readers: long or wide CSV/TSV tables, HELM's ``groups/<group>.json`` tables (``helm-summarize`` output), the
Open LLM Leaderboard's per-model results JSON (lm-evaluation-harness layout: ``{"config_general":
{"model_name": ...}, "results": {"harness|arc:challenge|25": {"acc_norm": ...}, ...}}``) and its CSV export.
Every failure prints one line naming the argument and exits with status 2; a warning (models listed more than
once) is one line on stderr and a note in the report. The command is a thin layer over
:func:`effstats.reliability.audit` which returns an ``AuditResult``. The documentation's *Command-line reference*
page lists every command (``audit``, ``select``, ``estimate``, ``sequential start|update|status``) and option, written
from the parsers ``build_parser()`` builds.
"""
from __future__ import annotations

import argparse
import errno
import importlib
import io
import os
import re
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ._entry import INTERRUPTED as _INTERRUPTED
from ._entry import command_name, interrupted
from ._entry import interrupt_after as _interrupt_after
from .datasets._score_options import DUPLICATE_POLICIES, SCORE_FORMATS

if TYPE_CHECKING:  # for type checkers and IDEs; at run time these load on first use (see __getattr__)
    from .datasets import read_helm_json, read_openllm_csv, read_openllm_json, read_scores

# the readers live in effstats.datasets; they stay importable from here, where users first met them
__all__ = ["main", "read_scores", "read_helm_json", "read_openllm_json", "read_openllm_csv"]
_READERS = {"read_scores", "read_helm_json", "read_openllm_json", "read_openllm_csv"}
# audit's arguments whose command-line option is spelled otherwise: an error naming the argument names the option
_AUDIT_FLAGS = {"n_boot": "--n-boot", "n_jobs": "--jobs"}


def __getattr__(name: str):
    # the readers import pandas: `effstats --help` and the workflow commands do not load them
    if name in _READERS:
        return getattr(importlib.import_module(".datasets", __package__), name)
    raise AttributeError(f"module 'effstats.cli' has no attribute {name!r}")


def _run_audit(data: Any, out: str | Path | None = None, **options: Any):
    """``effstats audit``: :func:`effstats.reliability.audit` on the command line's arguments."""
    with _interrupt_after():
        from .reliability import audit

    return audit(data, out, **options)


class _ClosedStdout(io.TextIOBase):
    """Python's stdout when the command starts with none (``effstats ... >&-``): what the command prints is dropped,
    and the flush after it raises the write error of a closed stdout once, where a full stdout's is reported."""

    written = False

    def write(self, s: str) -> int:
        self.written = self.written or bool(s)
        return len(s)

    def flush(self) -> None:
        if self.written:
            self.written = False
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit status 2
        self.exit(2, f"{self.prog}: error: {message}\n")

    def _print_message(self, message: str, file: Any = None) -> None:
        # argparse 3.13 drops the error of a failed write (--help or --version into a full stdout): main reports it
        if message:
            (file or sys.stderr).write(message)


# matplotlib's warning that the figures' font lacks a character of a name: "Glyph 21517 (\N{CJK UNIFIED
# IDEOGRAPH-540D}) missing from current font." (or "from font(s) DejaVu Sans.")
_GLYPH = re.compile(r"Glyph (\d+) \(.*\) missing from (?:current font|font\(s\) .*)")


def _audit_warnings(caught: list) -> list[str]:
    """The lines to print for the audit's warnings: each user warning once (each also stands in the report), and
    matplotlib's warnings of glyphs missing from the figures' font, repeated for every glyph and every figure, as
    one line naming the characters."""
    lines: list[str] = []
    glyphs: list[int] = []
    for w in caught:
        line = str(w.message).splitlines()[0] if str(w.message) else ""
        glyph = _GLYPH.match(line)
        if glyph:
            glyphs += [] if int(glyph[1]) in glyphs else [int(glyph[1])]
        elif issubclass(w.category, UserWarning) and line not in lines:
            lines.append(line)
    if glyphs:
        shown = ", ".join(f"U+{g:04X}" for g in glyphs[:5]) + (f", {len(glyphs) - 5} more" if len(glyphs) > 5 else "")
        lines.append(f"the figures' font has no glyph for {len(glyphs)} character(s) of the names ({shown}): they show "
                     "as empty boxes in the figures; the report's tables show them")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``effstats`` command.

    ``effstats audit SCORES --out DIR`` writes the reliability report (``report.md``, ``report.html``, figures,
    CSV tables) for a score file; the workflow commands (``effstats select``, ``effstats estimate``,
    ``effstats sequential``) are added by :mod:`effstats.workflow`. Every failure prints one line naming the
    argument on stderr.

    Parameters
    ----------
    argv : sequence of str, default=None
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 2 on bad input or usage, 130 after a Ctrl-C (one line on stderr; the
        files already written are complete).

    See Also
    --------
    effstats.reliability.audit : the same audit from Python.

    References
    ----------
    Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N., Shmueli-Scheuer, M. and
    Choshen, L. (2024). Efficient Benchmarking (of Language Models). *Proceedings of NAACL 2024*,
    arXiv:2308.11696.

    Examples
    --------
    >>> import os, tempfile
    >>> from effstats.cli import main
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "board.csv"), "w") as f:
    ...     _ = f.write('''model,A,B,C
    ... x,0.9,0.8,0.7
    ... y,0.5,0.6,0.4
    ... z,0.1,0.3,0.2
    ... ''')
    >>> main(["audit", os.path.join(folder, "board.csv"), "--out", os.path.join(folder, "report"),
    ...       "--n-boot", "20", "--no-progress"])  # doctest: +ELLIPSIS
    /.../report/report.md
    0
    >>> main(["audit", os.path.join(folder, "nope.csv"), "--out", os.path.join(folder, "report")])
    2
    """
    args = sys.argv[1:] if argv is None else list(argv)
    closed = sys.stdout is None
    if closed:
        sys.stdout = _ClosedStdout()
    try:
        status = _main(argv)
        sys.stdout.flush()  # here, not at exit, so that a closed pipe or a full or closed stdout is caught below
        return status
    except KeyboardInterrupt:  # before a command runs (its modules being imported): nothing is written yet
        return interrupted(args)
    except BrokenPipeError:
        # The reader of the output stopped early (``effstats ... | head``): the files are written, only the printout
        # is cut. Stop quietly with the status of a tool ended by SIGPIPE; stdout goes to devnull so that Python's
        # final flush does not raise again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):  # no file descriptor (stdout replaced by an object in memory)
            pass
        return 141
    except OSError as exc:  # a full or closed stdout (--help, --version, what a command printed last)
        from .workflow._cli import _quiet_stdout, os_error_line

        print(f"{command_name(args)}: error: {os_error_line(exc)}", file=sys.stderr)
        _quiet_stdout()
        return 2
    finally:
        if closed:
            sys.stdout.written = False  # nothing left for its finaliser's flush to raise
            sys.stdout = None


def build_parser() -> argparse.ArgumentParser:
    """The ``effstats`` command's parser with every subcommand (the documentation's command-line page is written
    from it)."""
    from . import __version__
    from .workflow._cli import real_number, whole_number

    parser = _Parser(prog="effstats", description="effstats command line tools")
    parser.add_argument("--version", action="version", version=f"effstats {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("audit", help="benchmark reliability report (what to add / drop, resolved ranks, DIoR)",
                       description="Read a leaderboard's scores per model and scenario, resample the benchmark's "
                                   "design and write OUT/report.md, report.html, figures and CSV tables: how "
                                   "resolved the ranking is, which scenarios to add or drop, and whether the "
                                   "published aggregate is reproduced.")
    p.add_argument("scores", metavar="SCORES",
                   help="table (CSV/TSV), HELM groups JSON, or Open LLM results JSON / folder")
    p.add_argument("--format", default="auto", choices=list(SCORE_FORMATS), help="input layout (default: auto)")
    p.add_argument("--table", default=None, help="HELM JSON: title (or part) of the table to audit")
    p.add_argument("--by", default=None, help="scenario column of a long table (default: scenario)")
    p.add_argument("--model", default=None, help="model column (default: model)")
    p.add_argument("--item", default=None, help="example column of a long per-example table (default: item)")
    p.add_argument("--score", default=None, help="score column of a long table (default: score)")
    p.add_argument("--scenarios", default=None,
                   help="comma-separated score columns to audit (default: every numeric column except a published "
                        "aggregate such as 'Average' / 'Mean win rate' / 'Score' or a column equal to the mean or "
                        "win rate of the others, rank and metadata columns such as 'Rank', 'Parameters', "
                        "'Throughput'; the report lists what was left out; a comma inside a name is written \\,)")
    p.add_argument("--exclude", default=None, help="comma-separated columns to leave out (a comma inside a name: \\,)")
    p.add_argument("--higher-is-better", default=None, metavar="COLUMNS",
                   help="comma-separated score columns read as they are (default: a column marked ↓ or named like a "
                        "lower-is-better metric, such as 'Mean squared error', 'WER' or 'val_loss', is negated, "
                        "with a warning naming it)"),
    p.add_argument("--metric", default=None,
                   help="Open LLM / lm-eval results JSON: the metric to read for every task, e.g. acc (default: the "
                        "Open LLM Leaderboard's per task, acc_norm for ARC and HellaSwag, else the first of "
                        "acc_norm, acc, mc2, exact_match, ... an entry logs; tasks without it are left out)")
    p.add_argument("--filter", default=None,
                   help="Open LLM / lm-eval results JSON: lm-eval 0.4's filter to read where a metric is logged "
                        "under several, e.g. flexible-extract (default: the first one logged)")
    p.add_argument("--duplicates", default=None, choices=list(DUPLICATE_POLICIES),
                   help="models listed more than once: keep the last row in file order, the first, average them, "
                        "or refuse (default: last, with a warning; refused where a text column names every row, "
                        "which makes the rows distinct entries: --model that column audits them); no date column is "
                        "read: sort the rows to keep the latest run. A model's results JSON files are merged task by "
                        "task: this resolves a task several of them hold")
    p.add_argument("--aggregate", default="auto", choices=["auto", "mwr", "mean", "mean-of-means"],
                   help="how the leaderboard ranks models; auto = as its published aggregate column does (a mean "
                        "for 'Average' / 'Score' and for results JSON files, the Mean Win Rate for 'Mean win rate' "
                        "or when there is none) "
                        "(default: auto); a mean of columns in 0-100 beside columns in [0, 1] is refused, naming "
                        "them, unless the published mean averages them as they are")
    p.add_argument("--scale", default="auto", choices=["auto", "fraction", "percent", "as-is"],
                   help="the scores' scale: auto = judged per column by content (within [0, 1] a fraction, within "
                        "0-100 and above 10 percent, divided by 100 when every column is; within 0-10 read as it "
                        "is); percent divides every column by 100 (values outside [0, 100] refused; a warning when "
                        "every value lies in [0, 1]); fraction reads them as they are (values outside [0, 1] "
                        "refused); as-is reads them as they are; a stated scale skips the check for rows on two "
                        "scales (default: auto)")
    p.add_argument("--ties", default="auto", choices=["auto", "strict", "half"],
                   help="win-rate ties: strict (App. A) or half credit (HELM's code); auto = half for HELM inputs and "
                        "for a published win rate that half credit reproduces better, strict otherwise (default: auto)")
    p.add_argument("--out", default="reliability_report", help="output directory (default: reliability_report)")
    p.add_argument("--force", action="store_true",
                   help="replace the report an earlier audit wrote in --out (the files its .effstats_audit.json "
                        "lists; refused without it); a file of those names no audit wrote is refused with or without "
                        "it")
    p.add_argument("--n-boot", type=whole_number, default=1000, help="bootstrap resamples (default: 1000)")
    p.add_argument("--target", type=real_number, default=0.95,
                   help="target DIoR for the recommendations (default: 0.95)")
    p.add_argument("--seed", type=whole_number, default=0, help="random seed, a non-negative integer (default: 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (shown on a terminal)")
    p.add_argument("--jobs", type=whole_number, default=None,
                   help="1: compute in this process; more than 1: one forked process shares the work (POSIX but "
                        "macOS); the report is the same (default: forked when more than one core is usable and "
                        "--n-boot x models x scenarios is at least 2e7)")
    from .workflow import _cli as workflow_cli

    workflow_cli.add_commands(sub)
    return parser


def _main(argv: Sequence[str] | None) -> int:
    from .workflow import _cli as workflow_cli

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (exit 2, one line) and --help (exit 0)
        return int(exc.code or 0)
    import gc

    # the command's process: the modules' objects live until it ends, so no garbage collection needs to look at them,
    # neither while they load (a fifth of their import time) nor later, once frozen
    loading = argv is None and gc.isenabled()
    if loading:
        gc.disable()
    try:
        with _interrupt_after():  # every command reads its data with them; the loop's commands compute with scipy.stats
            import numpy  # noqa: F401
            import pandas  # noqa: F401

            # scipy prints its generated code when interrupted while scipy.sparse.linalg is imported (under
            # scipy.stats and scipy.optimize); the audit needs scipy.optimize only, a third of scipy.stats' time
            if args.command == "audit":
                import scipy.optimize  # noqa: F401
            else:
                import scipy.stats  # noqa: F401
    finally:
        if loading:
            gc.freeze()
            gc.enable()
    if args.command != "audit":
        status = workflow_cli.run(args)
        if argv is None:
            gc.freeze()  # as the audit's process below
        return status
    try:
        if args.seed < 0:
            raise ValueError(f"--seed: expected a non-negative integer, got {args.seed}")
        if args.n_boot < 2:
            raise ValueError(f"--n-boot: at least 2 resamples are needed for a standard error and an interval, got "
                             f"{args.n_boot}")
        if not 0 < args.target < 1:
            raise ValueError(f"--target: expected a number in (0, 1), got {args.target}")
        if args.jobs is not None and args.jobs < 1:
            raise ValueError(f"--jobs: expected a positive integer, got {args.jobs}")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            by = "scenario" if args.by is None else args.by  # an empty --by is refused, not read as the default
            _run_audit(args.scores, args.out, format=args.format, table=args.table, by=by,
                  model=args.model, item=args.item, score=args.score, scenarios=args.scenarios, exclude=args.exclude,
                  duplicates=args.duplicates, aggregate=args.aggregate, ties=args.ties, n_boot=args.n_boot,
                  target=args.target, seed=args.seed, progress=False if args.no_progress else None,
                  force=args.force, n_jobs=args.jobs, scale=args.scale, metric=args.metric, filter=args.filter,
                  higher_is_better=args.higher_is_better)
    except ValueError as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        for name, flag in _AUDIT_FLAGS.items():  # the API's names of the options, as the command line spells them
            if msg.startswith(f"{name}: "):
                msg = flag + msg[len(name):]
        print(f"effstats audit: error: {msg}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # numpy says how much it could not allocate
        print(f"effstats audit: error: --n-boot: out of memory with {args.n_boot:,} resamples of this table "
              f"({str(exc).splitlines()[0] if str(exc) else 'MemoryError'}); give fewer", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # every file is written to a temporary file and renamed: none is half-written
        print(f"effstats audit: {_INTERRUPTED}", file=sys.stderr)
        return 130
    except OSError as exc:  # a report file that cannot be written (the folder was checked; a file in it was not)
        print(f"effstats audit: error: {workflow_cli.os_error_line(exc, args.out)}", file=sys.stderr)
        return 2
    for line in _audit_warnings(caught):
        print(f"effstats audit: warning: {line}", file=sys.stderr)
    print(Path(args.out) / "report.md")
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:  # stdout full (/dev/full)
        print(f"effstats audit: error: {workflow_cli.os_error_line(exc)}", file=sys.stderr)
        workflow_cli._quiet_stdout()
        return 2
    if argv is None:
        # the command's process (not a caller of main's) ends next: its objects, the cycles of pandas', matplotlib's
        # and SciPy's modules among them, need no garbage collection at exit (a quarter of a second)
        gc.freeze()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
