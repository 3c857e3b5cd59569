"""``effstats select``, ``effstats estimate`` and ``effstats sequential start|update|status``: the harness loop.

Every bad input prints one line naming the argument and exits with status 2; warnings print one line each.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import io
import re
import sys
import warnings
from pathlib import Path

from .._escape import control_text, line_text
from .._user_files import refuse_empty_path, refuse_url
from ._names import (_SEEDLESS, HELM_INSTANCES, ITEMS_JSON, LM_EVAL_SAMPLES, METHODS, SCORES, WEIGHTS,
                     _lm_eval_comma_note, _shell_word, _tasks_option)

_READ_FORMATS = ["auto", "lm-eval", "helm", "csv", "parquet"]


def whole_number(text: str) -> int:
    """An integer option's value as the tables are read: digits with an optional sign, nothing else (Python's
    ``int`` also takes ``1_0`` as 10, and digits of other scripts)."""
    if not re.fullmatch(r"\s*[+-]?[0-9]+\s*", text):
        raise ValueError(text)
    return int(text)


whole_number.__name__ = "int"  # argparse's message: "argument --budget: invalid int value: '1_0'"


def real_number(text: str) -> float:
    """A number option's value as the tables are read: decimal digits with an optional sign, point and exponent
    (``inf`` and ``nan`` are left to the option's own check), nothing else (Python's ``float`` also takes ``0.9_5``
    as 0.95, and digits of other scripts)."""
    if not re.fullmatch(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*|\s*[+-]?(?:inf|infinity|nan)\s*",
                        text, flags=re.IGNORECASE):
        raise ValueError(text)
    return float(text)


real_number.__name__ = "float"  # argparse's message: "argument --confidence: invalid float value: '0.9_5'"
_PROTOCOL_HELP = ("lm-eval logs: score new results whose prompts (prompt_hash) or few-shot count differ from the "
                  "reference logs' at the chosen documents, with a warning (refused by default: another protocol "
                  "moves every score); other documents or targets (doc_hash, target_hash) are refused always. HELM "
                  "runs: the same for another adapter spec (method, prompt, few-shot count, temperature)")


def _reader_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", default="auto", choices=_READ_FORMATS,
                   help="layout of REFERENCE (default: auto, from the file name or the folder's contents)")
    p.add_argument("--metric", default=None,
                   help="per-item metric: lm-eval's per-sample field (default acc) or HELM's stat (default "
                        "exact_match); per task as TASK=METRIC pairs and one for the rest (gsm8k=exact_match,acc; "
                        "HELM: bbq=quasi_exact_match,exact_match)")
    p.add_argument("--duplicates", default="last", choices=["last", "first", "mean", "error"],
                   help="two runs of one model: keep the latest (default, with a warning), the first, average, "
                        "or refuse")
    p.add_argument("--filter", default=None,
                   help="lm-eval logs with several filters (gsm8k: strict-match, flexible-extract): the one to read "
                        "(per task: gsm8k=strict-match)")
    _helm_args(p)


def _helm_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--split", default="test",
                   help="HELM runs: the split to read (default: test; valid for scenarios HELM evaluates on their "
                        "validation split, such as HellaSwag; any: every split)")
    p.add_argument("--perturbation", default=None,
                   help="HELM runs: read the instances with this perturbation (a name such as typo, or a JSON object "
                        "of its fields) instead of the unperturbed ones")
    p.add_argument("--trials", default="mean", metavar="{mean,separate,N}",
                   help="HELM runs with several train trials: average them (default; 0/1 results become graded), "
                        "keep each trial as a 0/1 response (separate), or read train trial N only")


def _helm_values(args: argparse.Namespace) -> dict:
    """The HELM options of the command line as the Python API takes them."""
    import json

    from .._shared import RepeatedKeyError, json_object

    pert = args.perturbation
    if pert is not None and pert.lstrip().startswith("{"):
        try:
            pert = json.loads(pert, object_pairs_hook=json_object)
        except RepeatedKeyError as exc:
            raise ValueError(f"--perturbation: names the key {exc.args[0]!r} twice; give each field once") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"--perturbation: not a JSON object ({exc.msg}): {args.perturbation!r}") from None
        except RecursionError:
            raise ValueError("--perturbation: nests objects too deeply to be a HELM perturbation") from None
    trials = args.trials
    if trials not in ("mean", "separate"):
        if not re.fullmatch(r"[0-9]+", trials):  # str.isdigit: also '²' (int refuses it) and other scripts' digits
            raise ValueError(f"--trials: expected mean, separate or a train trial's index (0, 1, ...), got {trials!r}")
        trials = int(trials)
    return {"split": None if args.split == "any" else args.split, "perturbation": pert, "trials": trials}


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the workflow subcommands on the ``effstats`` parser."""
    p = sub.add_parser("select", help="choose the items to evaluate a new model on; write the lm-eval --samples file",
                       description="Read the reference models' per-item results, choose the items to evaluate a new "
                                   "model on, and write DIR/manifest.json and, for lm-eval references, "
                                   "DIR/lm_eval_samples.json (lm_eval --samples) or, for HELM run folders, "
                                   "DIR/helm_instances.json (the chosen instance ids per run spec); items of a "
                                   "CSV/TSV/Parquet table are listed in the manifest.")
    p.add_argument("reference", metavar="REFERENCE",
                   help="reference results: a folder of lm-eval samples_*.jsonl logs, HELM run folders, or a "
                        "long/wide CSV, TSV or Parquet table of item scores")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--budget", type=whole_number, help="items to evaluate the new model on")
    size.add_argument("--target-error", type=real_number, metavar="POINTS",
                      help="the smallest budget of a doubling grid (25, 50, 100, ..., all items) whose cross-validated "
                           "error on the reference models is at most POINTS")
    p.add_argument("--method", default="stratified-aipw", choices=list(METHODS),
                   help="how items are chosen (default: stratified-aipw, a stratified random sample with a "
                        "regression correction whose interval holds for any new model, graded scores included; "
                        "sortsearch (0/1 results only), aipw, stratified and random also draw their items at random "
                        "and hold for any new model; auto: in each task, among the candidates that draw their items at "
                        "random, the one with the smallest error on the reference models, the worse of its "
                        "cross-validated error and its error on their best tenth held out, but stratified-aipw is "
                        "kept unless another beats it by more than the cross-validation noise (the one-standard-error "
                        "rule, Bonferroni-corrected over the challengers); a new model outside the references' range "
                        "gets the pick's design-based estimate, or AIPW's on the same items when the pick is fitted "
                        "to the references)")
    p.add_argument("--tasks", default=None, action="append",
                   help="comma-separated tasks of REFERENCE to use (default: all); may be repeated, and a comma "
                        "inside a task's name is written \\, (--tasks 'a\\,b')")
    p.add_argument("--weights", default="items", choices=list(WEIGHTS),
                   help="the whole-benchmark score to split the budget for, estimate's default: the mean over all "
                        "items (default; 2 items a task, the rest in proportion to the tasks' sizes) or the mean "
                        "of the task means (tasks: Neyman allocation, items in proportion to the spread of the "
                        "reference models' results in each task)")
    p.add_argument("--seed", type=whole_number, default=None,
                   help=f"random seed (default: 0); methods {' and '.join(_SEEDLESS)} choose the same items at a "
                        "--budget whatever the seed")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="folder for manifest.json and lm_eval_samples.json (lm-eval references, and tables whose item "
                        "ids read <task>/<doc_id>) or helm_instances.json (HELM), and a compact copy of the "
                        "reference data, reference.npz, where one gives the data back exactly")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bars (shown on a terminal for a read or a fit that takes over 2 s)")
    p.add_argument("--force", action="store_true",
                   help="replace a selection already in DIR (its files and estimates; other files in DIR stay)")
    _reader_args(p)

    e = sub.add_parser("estimate", help="a new model's score, interval and rank from its results on the chosen items",
                       description="Read the new model's results on the items of a manifest, refit from the reference "
                                   "data, and report the score, its interval and the rank among the reference models.")
    e.add_argument("manifest", metavar="DIR", help="the folder `effstats select --out` wrote (or its manifest.json)")
    e.add_argument("new_results", metavar="NEW_RESULTS",
                   help="the new model's results: lm-eval's --output_path folder of the --samples run, HELM run "
                        "folders, or a long/wide CSV, TSV or Parquet table of item scores")
    e.add_argument("--reference", default=None,
                   help="the reference data, in the layout the manifest was made from (the same logs, moved or "
                        "copied), read instead of its copy DIR/reference.npz and of the path it records")
    e.add_argument("--metric", default=None, help="per-item metric of NEW_RESULTS (default: the reference's)")
    e.add_argument("--confidence", type=real_number, default=0.95, help="confidence level (default: 0.95)")
    e.add_argument("--weights", default=None, choices=list(WEIGHTS),
                   help="the whole-benchmark score: each item counts once or each task counts once (default: the "
                        "one the selection was made for, select's --weights; the other is estimated too, with a "
                        "warning)")
    e.add_argument("--duplicates", default="last", choices=["last", "first", "mean", "error"],
                   help="two runs of one model in NEW_RESULTS (default: the latest, with a warning)")
    e.add_argument("--tasks", default=None, action="append",
                   help="comma-separated tasks of the manifest to score on (default: all; a task NEW_RESULTS lacks "
                        "is refused unless left out here, and the report names the tasks left out); may be "
                        "repeated, and a comma inside a task's name is written \\, (--tasks 'a\\,b')")
    e.add_argument("--out", default=None, metavar="DIR",
                   help="where to write estimate.csv/.md/.html and tasks.csv "
                        "(default: DIR/estimate/<NEW_RESULTS' name>, a file's without its extension: new.csv -> "
                        "DIR/estimate/new)")
    e.add_argument("--force", action="store_true",
                   help="replace a report an earlier estimate wrote in the output folder (its record, "
                        ".effstats_estimate.json, lists the files; a file of that name it did not write is refused)")
    e.add_argument("--no-progress", action="store_true",
                   help="no progress bars (shown on a terminal for a read or a fit that takes over 2 s)")
    e.add_argument("--restrict-to-manifest", action="store_true",
                   help="read only the manifest's items of NEW_RESULTS (a full run of the benchmark, e.g. HELM runs) "
                        "and ignore the others; HELM runs are read with the manifest's split, perturbation and trials")
    e.add_argument("--allow-protocol-change", action="store_true", help=_PROTOCOL_HELP)
    e.add_argument("--model", default=None, action="append", metavar="NAME",
                   help="score only these models of NEW_RESULTS (default: all): a folder holding the reference "
                        "models' runs too (HELM's benchmark_output/runs/SUITE, an lm-eval output folder of every "
                        "model); comma-separated, may be repeated")

    s = sub.add_parser("sequential", help="adaptive evaluation in batches through the harness",
                       description="Hand out batches of items until a group-sequential rule (random items) or "
                                   "adaptive IRT testing (the most informative items) decides.")
    ssub = s.add_subparsers(dest="action", required=True, parser_class=type(s))
    st = ssub.add_parser("start", help="fix the item order and write the first batch",
                         description="Fix the item order and write DIR/state.json and the first batch, DIR/batch_001/: "
                                     "items.json (the batch's item ids exactly: join results on these), "
                                     "items.csv (the same for eyes and spreadsheets: ids starting with = + - @ "
                                     "quoted) and, for lm-eval references, "
                                     "lm_eval_samples.json (lm_eval --samples) or, for HELM run folders, "
                                     "helm_instances.json; each update writes the next batch_NNN/ alike.")
    st.add_argument("reference", metavar="REFERENCE", help="reference results (as for effstats select)")
    st.add_argument("--out", required=True, metavar="DIR", help="folder for the state and the batches")
    st.add_argument("--force", action="store_true",
                    help="replace a run already in DIR (its looks are lost; starting again after seeing results "
                         "breaks the sequential test's error control)")
    st.add_argument("--rule", default=None, choices=["precision", "efficacy", "adaptive"],
                    help="the stopping rule (default: efficacy with --against, precision with --half-width, "
                         "adaptive with --target-se)")
    rule = st.add_mutually_exclusive_group()
    rule.add_argument("--against", metavar="MODEL", help="efficacy: is the new model better or worse than MODEL?")
    rule.add_argument("--half-width", type=real_number, metavar="H",
                      help="precision: stop once half the width of the score's (1 - alpha) interval is at most H "
                           "(0.02 = 2 points; the interval need not be centred on the score; default with --rule "
                           "precision: 0.02)")
    rule.add_argument("--target-se", type=real_number, metavar="S",
                      help="adaptive: IRT item bank fitted on REFERENCE (0/1 results), the most informative items "
                           "next; stop once the ability's standard error is at most S (default: 0.3)")
    st.add_argument("--correction", default=None, choices=["logistic"],
                    help="precision: batches drawn within 5 strata of REFERENCE's difficulty order, every look's "
                         "estimate corrected by a logistic model on the items' features from REFERENCE")
    st.add_argument("--alternative", default="two-sided", choices=["two-sided", "greater", "less"],
                    help="with --against: the claim to test (greater: the new model is better) (default: two-sided)")
    st.add_argument("--alpha", type=real_number, default=0.05, help="error level (default: 0.05)")
    st.add_argument("--spending", default="ld_pocock", choices=["ld_pocock", "ld_obf", "hsd", "power"],
                    help="error-spending family (default: ld_pocock); with --half-width it sets only the repeated "
                         "intervals shown while the run continues and at a stop at the cap short of the half-width: a "
                         "run stopping on its half-width reports the Chow-Robbins fixed-width interval")
    st.add_argument("--initial", type=whole_number, default=None,
                    help="items in the first batch (default: 100, at most the benchmark's items; adaptive: --batch)")
    st.add_argument("--batch", type=whole_number, default=None,
                    help="items in each later batch (default: 100, at most the benchmark's items; adaptive: 10); "
                         "later batches shrink near the cap, and with --half-width to the items the interval is "
                         "projected to still need, at least 50 (or --batch, or a tenth of the items evaluated, where "
                         "fewer)")
    st.add_argument("--max-n", type=whole_number, default=None,
                    help="at most this many items (default: all items; with --half-width the worst-case fixed "
                         "design's size, at accuracy 1/2 with the finite-population correction: 185 of 600 items "
                         "for ±0.06)")
    st.add_argument("--seed", type=whole_number, default=0,
                    help="random seed of the item order (default: 0; adaptive runs are deterministic)")
    st.add_argument("--format", default="auto", choices=_READ_FORMATS, help="layout of REFERENCE (default: auto)")
    st.add_argument("--metric", default=None, help="per-item metric (as for effstats select)")
    st.add_argument("--duplicates", default="last", choices=["last", "first", "mean", "error"],
                    help="two runs of one model (default: the latest, with a warning)")
    st.add_argument("--filter", default=None, help="lm-eval filter to read (as for effstats select)")
    st.add_argument("--no-progress", action="store_true",
                    help="no progress bar (shown on a terminal for a read of REFERENCE that takes over 2 s)")
    _helm_args(st)
    up = ssub.add_parser("update", help="record a batch's results; write the next batch or the decision",
                         description="Read the batch's results, record the look, and write the next batch or the "
                                     "decision.")
    up.add_argument("state", metavar="DIR", help="the folder `effstats sequential start --out` wrote")
    up.add_argument("new_results", metavar="NEW_RESULTS", help="the batch's results (as for effstats estimate)")
    up.add_argument("--model", default=None,
                    help="which model of NEW_RESULTS (when it holds several: a folder holding the reference models' "
                         "runs too, as HELM's benchmark_output/runs/SUITE); a comma inside its name is written \\, "
                         "(as for estimate --model)")
    up.add_argument("--metric", default=None, help="per-item metric (default: the reference's)")
    up.add_argument("--duplicates", default="last", choices=["last", "first", "mean", "error"],
                    help="two runs of the model in NEW_RESULTS (default: the latest, with a warning)")
    up.add_argument("--reference", default=None,
                    help="adaptive runs and --correction: the reference data in the layout the run was started "
                         "from, read instead of the run's copy (DIR/reference.npz) and of the path the state records "
                         "(refused for other runs, which read none)")
    up.add_argument("--no-progress", action="store_true",
                    help="accepted as on the other commands; update reads one batch and shows no progress bar")
    up.add_argument("--restrict-to-manifest", action="store_true",
                    help="read only this batch's items of NEW_RESULTS (a whole run of the benchmark, e.g. HELM runs: "
                         "helm-run runs whole run specs) and leave out the others, saying how many")
    up.add_argument("--allow-protocol-change", action="store_true", help=_PROTOCOL_HELP)
    up.add_argument("--skip-failed", action="store_true",
                    help="record the look on the batch's items that have a result and drop the others (failed "
                         "documents) from the run, with a warning naming them: the run is then about the benchmark "
                         "without them (random-order --half-width and --against runs; without it every item of the "
                         "batch needs a result)")
    stat = ssub.add_parser("status", help="show a run's looks, items used, estimate, interval and decision",
                           description="Print where a sequential run stands: its looks, the items used, the current "
                                       "estimate with its interval, and the decision (continue while it goes on). "
                                       "Reads the run and writes nothing.")
    stat.add_argument("state", metavar="DIR", help="the folder `effstats sequential start --out` wrote")
    stat.add_argument("--json", action="store_true",
                      help="print one JSON object on one line instead (null where there is no value yet)")
    stat.add_argument("--reference", default=None,
                      help="adaptive runs and --correction: the reference data in the layout the run was started "
                           "from, read instead of the run's copy (DIR/reference.npz) and of the path the state "
                           "records (refused for other runs, which read none)")


def _lm_eval_hint(samples_file: Path, samples: dict,
                  head: str = "run the new model on them (an lm-eval with --samples)") -> str:
    note = _lm_eval_comma_note(samples)
    return (f"{head}:\n  lm_eval --model ... --tasks {_shell_word(','.join(samples))} --samples "
            f"{_shell_word(str(samples_file))} --log_samples --output_path <OUT>  (a new folder)"
            + (f"\n  note: {note}" if note else ""))


def _table_hint(ids: str, command: str, samples_file: Path, samples: dict | None) -> str:
    """The next step for a table reference (CSV, TSV, Parquet, a DataFrame): where the chosen item ids are and the
    command that reads the new model's results as a table; the lm-eval command only as the way for lm-eval tasks."""
    return (f"the chosen item ids: {ids}\nrun the new model on them and pass its results as a table (columns model, "
            f"item, score; or one row per model and a column per item):\n  {command} <RESULTS.csv>"
            + ("" if samples is None else "\n" + _lm_eval_hint(
                samples_file, samples, "if they are documents of lm-eval tasks, lm_eval runs them (then pass its "
                                       "<OUT> folder instead)")))


def _warn_out_among_inputs(args: argparse.Namespace) -> None:
    """A warning when --out is an input folder (REFERENCE, NEW_RESULTS) or inside one: the outputs then lie among
    the inputs, where a later read of that folder can take them for results."""
    import os
    import warnings

    out = Path(args.out).expanduser().resolve()
    for attr, shown in (("reference", "REFERENCE"), ("new_results", "NEW_RESULTS")):
        given = getattr(args, attr, None)
        src = None if given is None else Path(given).expanduser()
        # os.path.isdir: False for a name the system refuses (too long), which the reader then names
        if src is not None and os.path.isdir(src) and (out == src.resolve() or src.resolve() in out.parents):
            where = "is" if out == src.resolve() else "is inside"
            warnings.warn(f"--out: {args.out} {where} the {shown} folder {given}: the output files lie among the "
                          "input files; a folder of its own keeps them apart", UserWarning, stacklevel=2)


def _tasks(args: argparse.Namespace) -> list[str] | None:
    """--tasks as a list of names; --out checked to name a folder (an empty one would be the current folder)."""
    if getattr(args, "out", None) is not None:
        refuse_empty_path(args.out, "--out", "a folder", blank=True)
        refuse_url(args.out, "--out", output=True)
        _warn_out_among_inputs(args)
    if getattr(args, "tasks", None) is None:
        return None
    return _names(args.tasks, "--tasks", "task")


def _names(given: list[str], option: str, what: str) -> list[str]:
    """The names an option's values give: each value split at its commas, except escaped ones (``\\,``, a comma
    inside a name); the values add up."""
    names = [n.strip().replace("\\,", ",") for v in given for n in re.split(r"(?<!\\),", v) if n.strip()]
    if not names:
        raise ValueError(f"{option}: expected comma-separated {what} names, got {','.join(given)!r}")
    return names


def _models(given: list[str] | None) -> list[str] | None:
    """estimate's --model as a list of names (:func:`_names`)."""
    return None if given is None else _names(given, "--model", "model")


def _one_model(given: str | None) -> str | None:
    """sequential update's --model: one name, read as estimate reads each of its names (:func:`_names`)."""
    if given is None:
        return None
    if not given.strip():
        raise ValueError(f"--model: expected a model's name, got {given!r}")
    names = _names([given], "--model", "model")
    if len(names) > 1:
        shown = ", ".join(repr(n) for n in names)
        raise ValueError(f"--model: sequential update evaluates one model, got {len(names)} names ({shown}); a "
                         "comma inside a model's name is written \\, (--model 'a\\,b')")
    return names[0]


def _select(args: argparse.Namespace) -> None:
    from ._select import select
    from ._files import locked, refuse_existing

    # checked now, but nothing is removed until the new selection is written: a refused or killed run keeps a whole one
    refuse_existing(args.out, "manifest.json", args.force)
    tasks = _tasks(args)
    seed = 0 if args.seed is None else args.seed
    sel = select(args.reference, args.budget, method=args.method, target_error=args.target_error, seed=seed,
                 format=args.format, metric=args.metric, duplicates=args.duplicates, filter=args.filter, tasks=tasks,
                 progress=not args.no_progress, weights=args.weights, **_helm_values(args))
    if args.seed is not None and args.method in _SEEDLESS and args.target_error is None:
        print(f"effstats select: note: --seed {args.seed} changes nothing: method {args.method} chooses its items "
              "deterministically", file=sys.stderr)
    with locked(Path(args.out), "--out"):  # a second command into the same folder waits or is refused, not mixed in
        old = refuse_existing(args.out, "manifest.json", args.force)
        # the new files put in place together with the old selection's other files (its estimates) removed
        manifest = sel._save(args.out, replaced=old)
    if sel.budget_curve is not None:
        print(f"cross-validated error by budget (points) of {SCORES[sel.weights]} (--weights {sel.weights}):")
        print(sel.budget_curve.to_string(index=False))
        print(_target_error_line(sel.budget_curve, args.target_error))
    print(f"{len(sel.items)} of {sel.reference['n_items']} items in {len(sel.tasks)} task(s), method {sel.method}:")
    print(sel.tasks.rename(index=line_text).to_string())  # task names from the data, one row each
    if sel.weights == "tasks" and len(sel.tasks) == 1:
        print("--weights tasks: one task, whose mean is the mean over all items: the weights make no difference")
    elif sel.weights == "tasks":
        print("budget split for the mean of the task means (--weights tasks, estimate's default): items in "
              "proportion to the spread of the reference models' results in each task (Neyman allocation)")
    from ._metric_line import metric_line

    if (metric := metric_line(sel)) is not None:
        print(metric)
    if sel.shortfall is not None:
        print(f"fewer items than the budget: {sel.shortfall}")
    if sel.new_results_note is not None:
        print(f"new results: {sel.new_results_note}")
    print(f"manifest: {line_text(str(manifest))}")
    if sel.lm_eval_samples is not None and sel.reference.get("layout") == "lm-eval":
        print(_lm_eval_hint(Path(args.out) / LM_EVAL_SAMPLES, sel.lm_eval_samples))
    elif sel.helm_instances is not None:
        print(f"the chosen instance ids per run spec: {line_text(str(Path(args.out) / HELM_INSTANCES))}\n"
              f"run the new model on these run specs as the reference models were run (helm-run --run-entries "
              f"<run entry>,model=<new model> ...; HELM runs whole run specs), then read its chosen instances:\n"
              f"  effstats estimate {_shell_word(str(args.out))} <benchmark_output/runs/SUITE> --restrict-to-manifest")
    else:
        print(_table_hint(f'{line_text(str(manifest))} ("items")', f"effstats estimate {_shell_word(str(args.out))}",
                          Path(args.out) / LM_EVAL_SAMPLES, sel.lm_eval_samples))


def _target_error_line(curve, target: float) -> str:
    """One line: the cross-validated error at the budget ``--target-error`` picked, and the budgets tried (a
    doubling grid: the pick can be up to twice a budget that would just reach the target)."""
    b, e = int(curve["budget"].iloc[-1]), float(curve["cv_mae_points"].iloc[-1])
    tried = ", ".join(str(int(v)) for v in curve["budget"])
    if e <= target:
        between = (f"; a budget between {int(curve['budget'].iloc[-2])} and {b} may reach it too"
                   if len(curve) > 1 else "")
        how = f"the smallest budget tried that reaches {target:g}{between}"
    else:
        how = f"no budget tried reaches {target:g}"
    return (f"--target-error {target:g}: cross-validated error {e:.2f} points at {b} items ({how}); "
            f"budgets tried: {tried}")


# the extensions of results files a report folder's name leaves out (a compression's with the one before it)
_DATA_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".pq", ".json", ".jsonl")
_PACKED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zip")


def _report_dir(manifest: str, new_results: str) -> tuple[Path, str, str]:
    """The default folder of an estimate's report, the results' whole name and their resolved path: the folder is
    DIR/estimate/<the results' name>, a folder's whole name (``new.v1`` and ``new.v2`` get folders of their own;
    ``.`` is named by the folder it stands for), a file's without its data extension (``new.csv``: ``new``;
    ``new.csv.gz``: ``new``)."""
    from ._files import REPORTS

    base = Path(manifest).expanduser()
    given = Path(new_results).expanduser().resolve()
    whole = given.name or "results"
    name = whole
    if given.is_file():
        stem = Path(whole)
        if stem.suffix.lower() in _PACKED_SUFFIXES:
            stem = stem.with_suffix("")
        if stem.suffix.lower() in _DATA_SUFFIXES and stem.stem and not stem.stem.startswith("."):
            name = stem.stem
    return (base if base.is_dir() else base.parent) / REPORTS / name, whole, str(given)


def _estimate(args: argparse.Namespace) -> None:
    from .._results import check_confidence_level
    from ._estimate import estimate

    level = check_confidence_level(args.confidence, "--confidence")
    tasks = _tasks(args)
    est = estimate(args.manifest, args.new_results, reference=args.reference, metric=args.metric,
                   duplicates=args.duplicates, weights=args.weights, tasks=tasks,
                   restrict_to_manifest=args.restrict_to_manifest, progress=not args.no_progress,
                   allow_protocol_change=args.allow_protocol_change, models=_models(args.model))
    out, results, where = (Path(args.out), None, None) if args.out else _report_dir(args.manifest, args.new_results)
    from ._files import locked, real_folder, refuse_other_results, refuse_report, run_folder

    if not args.out:  # the default folder, DIR/estimate/<results>: never written (nor locked) through a link
        real_folder(out.parent.parent, f"{out.parent.name}/{out.name}", "--out", make=False)
    # two estimates into one folder: the second is refused, not mixed in; a report inside the selection's folder is
    # written under the selection's lock (a select --force waits), a report in its report folders together with the
    # manifest's version that lists it
    sel_dir = run_folder(Path(args.manifest).expanduser(), "manifest.json")
    inside = out.expanduser().resolve().is_relative_to(sel_dir.resolve())
    if results is not None:  # the default folder: never one of other results named alike
        refuse_other_results(out, results, where)
    refuse_report(out, args.force, sel_dir if inside else None)
    with locked(sel_dir if inside else out, "--out"):
        if results is not None:
            refuse_other_results(out, results, where)
        refuse_report(out, args.force, sel_dir if inside else None)
        paths = est._save(out, level, sel_dir if inside else None, results=results, results_path=where)
    if args.restrict_to_manifest:
        print(f"read the manifest's items from NEW_RESULTS; left out its {est.n_left_out} other item(s) "
              "(--restrict-to-manifest)")
    print(est._render(level, line_text), end="")  # the report as text: the .md file escapes for Markdown
    print(f"written: {', '.join(line_text(str(paths[k])) for k in ('markdown', 'html', 'csv', 'tasks'))}")


def _sequential(args: argparse.Namespace) -> None:
    if args.action == "start":
        rule = args.rule or ("efficacy" if args.against is not None else "precision" if args.half_width is not None
                             else "adaptive" if args.target_se is not None else None)
        if rule is None:
            raise ValueError("rule: name the stopping rule: --against MODEL (efficacy), --half-width H (precision) "
                             "or --rule adaptive [--target-se S]")
        if args.alternative != "two-sided" and rule != "efficacy":
            raise ValueError(f"--alternative: {args.alternative} applies to --against MODEL (efficacy), not to the "
                             f"{rule} rule; leave it out")
        _tasks(args)
        _start(args, rule)
        return
    if args.action == "status":
        _status(args)
        return
    from ._files import locked

    d = Path(args.state)
    with locked(d.parent if d.name == "state.json" and d.is_file() else d, create=False):
        _update(args)


def _status(args: argparse.Namespace) -> None:
    """``effstats sequential status``: the run as it stands, read without writing (no lock, no clean-up)."""
    import json

    from .._shared import _level_percent
    from ._sequential import SequentialRun

    from ._files import pending_state, run_folder
    from ._io import check_path

    # a start --force or an update a kill cut short midway: the next command on the run completes it before
    # anything else, so the run to describe is the one it leads to (its state, written in full, not yet renamed)
    pending = pending_state(run_folder(check_path(args.state, "directory"), "state.json"))
    run = SequentialRun._read(args.state if pending is None else pending[0], reference=args.reference, clean=False)
    s = run._status()
    if args.json:
        print(json.dumps({"directory": str(run._directory), **s, "pending": None if pending is None else pending[1]}))
        return
    if pending is not None:
        print(f"note: a command on {line_text(str(run._directory))} (process {pending[1]}) was stopped midway "
              "through writing the run below; the next `effstats sequential update` on it completes that write first")
    if s["rule"] == "efficacy":
        rule = f"efficacy against {line_text(str(s['against']))}"
    elif s["rule"] == "precision":
        rule = f"precision, half-width ≤ {s['half_width']:g}"
    else:
        rule = f"adaptive, ability standard error ≤ {s['target_se']:g}"
    model = "no results yet" if s["model"] is None else f"model {line_text(s['model'])}"
    print(f"{line_text(str(run._directory))}: rule {rule}; {model}")
    print(f"looks: {s['looks']}; items used: {s['items_used']:,} of at most {s['max_n']:,}")
    if s["n_dropped"]:
        print(f"dropped: {s['n_dropped']:,} item(s) that returned no result (--skip-failed), e.g. "
              f"{line_text(', '.join(s['dropped'][:5]))}: the run is about the benchmark without them")
    if s["estimate"] is None:
        print("estimate: none yet (no batch evaluated)")
    else:
        what = {"efficacy": "difference (new - reference)", "precision": "score", "adaptive": "accuracy"}[s["rule"]]
        kind = ("model-based " if s["rule"] == "adaptive" else
                "repeated " if s["decision"] == "continue" else "")
        print(f"{what}: {s['estimate']:.4f} (s.e. {s['standard_error']:.4f}); "
              f"{_level_percent(s['confidence_level'])} % {kind}interval [{s['ci_low']:.4f}, {s['ci_high']:.4f}]"
              + ("" if s["theta"] is None else f"; ability {s['theta']:.3f} (s.e. {s['theta_se']:.3f})"))
        if s.get("interval_note"):
            print(f"interval: {s['interval_note']}")
        if s.get("out_of_range"):
            print(f"out of range: {s['out_of_range_reason']}: the model-based interval does not hold for this model "
                  "(--rule precision gives one that does)")
    changes = s["protocol_changes"]
    if changes:
        print(f"runs made otherwise than the reference runs (--allow-protocol-change): "
              f"{line_text('; '.join(changes[:3]))}{' …' if len(changes) > 3 else ''}")
    batch = line_text(str(run._directory / f"batch_{s['looks'] + 1:03d}"))
    print(f"decision: continue; next batch: {s['next_items']:,} items in {batch}" if s["decision"] == "continue"
          else f"decision: stopped: {s['why']} ({s['decision']})")


def _start(args: argparse.Namespace, rule: str) -> None:
    from ._files import locked, refuse_existing
    from ._sequential import SequentialRun

    refuse_existing(args.out, "state.json", args.force)  # before reading the reference data
    seen = _state_bytes(Path(args.out).expanduser())
    run = SequentialRun.start(args.reference, rule=rule, against=args.against, alternative=args.alternative,
                              half_width=args.half_width, target_se=args.target_se, alpha=args.alpha,
                              spending=args.spending, initial=args.initial, batch=args.batch, max_n=args.max_n,
                              seed=args.seed, format=args.format, metric=args.metric, duplicates=args.duplicates,
                              filter=args.filter, progress=not args.no_progress, correction=args.correction,
                              **_helm_values(args))
    with locked(Path(args.out), "--out"):
        old = refuse_existing(args.out, "state.json", args.force)
        d = Path(args.out).expanduser()
        if _state_bytes(d) != seen:  # --force replaces the run the command found, not one written since
            raise ValueError(f"--out: another effstats command wrote a sequential run into {d} while this one read "
                             "the reference data; this one wrote nothing: run it again to replace that run")
        # the old run's files give way to the new run's as its state is written: an interruption leaves the old
        # run whole or the new one complete, never a mix
        path = run._save(args.out, replaced=old)
    if rule == "precision":  # the half-width is the whole rule: show it, also when it is the default
        h = run.state["rule"]["half_width"]
        print(f"rule: precision, stop once the interval's half-width is at most {h:g}"
              + (" (the default; set it with --half-width)" if args.half_width is None else "")
              + (", logistic correction" if args.correction else ""))
    elif rule == "efficacy":  # nothing bounds the looks but the benchmark: say how many it may take
        st = run.state
        looks = 1 + -(-max(0, st["max_n"] - st["initial"]) // max(1, st["batch"]))
        print(f"rule: efficacy against {line_text(str(st['rule']['against']))}: {st['initial']:,} items, then "
              f"{st['batch']:,} a look, up to {looks:,} looks ({st['max_n']:,} items)"
              + ("; close models can take dozens of looks, each a harness run: --batch B (and --initial) sets "
                 "fewer, larger batches" if looks > 10 and args.batch is None else ""))
    from ._metric_line import metric_line

    if (metric := metric_line(_run_as_selection(run))) is not None:  # what was read, as select says it
        print(metric)
    print(f"batch 1: {len(run.next_items):,} items in {line_text(str(path))}")
    if run.lm_eval_samples is not None and run.state["reference"].get("layout") == "lm-eval":
        print(_lm_eval_hint(path / LM_EVAL_SAMPLES, run.lm_eval_samples))
    _next_step(run, path, args.out)


def _run_as_selection(run):
    """What select's ``metric:`` line reads of a selection, of a sequential run: how the reference was read, and its
    tasks (every task of the reference data: a run draws its items from all of them)."""
    import types

    import pandas as pd

    from ._tasks import item_tasks

    tasks = pd.Series(0, index=pd.Index(pd.unique(item_tasks(run._reference)["task"].astype(str))))
    return types.SimpleNamespace(reference=run.state["reference"], tasks=tasks)


def _state_bytes(d: Path) -> bytes | None:
    """The content of ``d``'s state file as it is now (None where there is none)."""
    from .._shared import open_regular

    try:
        with open_regular(d / "state.json") as fh:
            return fh.read()
    except OSError:
        return None


def _next_step(run, path: Path, directory: str) -> None:
    """How to run the next batch and record it."""
    if run.helm_instances is not None:
        print(f"the batch's instance ids per run spec: {line_text(str(path / HELM_INSTANCES))}\n"
              "run the new model on these run specs as the reference models were run (helm-run --run-entries "
              "<run entry>,model=<new model> ...; HELM runs whole run specs), then read the batch's instances:\n"
              f"  effstats sequential update {_shell_word(str(directory))} <benchmark_output/runs/SUITE> "
              "--restrict-to-manifest")
    elif run.state["reference"].get("layout") == "lm-eval":
        print(f"then: effstats sequential update {_shell_word(str(directory))} <OUT>")
    else:
        print(_table_hint(f"{line_text(str(path / ITEMS_JSON))} ({line_text(str(path / 'items.csv'))}: the same, for a "
                          "spreadsheet)",
                          f"effstats sequential update {_shell_word(str(directory))}", path / LM_EVAL_SAMPLES,
                          run.lm_eval_samples))


def _update(args: argparse.Namespace) -> None:
    from ._report import _few_models_note
    from ._sequential import SequentialRun

    model = _one_model(args.model)
    run = SequentialRun.load(args.state, reference=args.reference)
    res = run.update(args.new_results, model=model, metric=args.metric, duplicates=args.duplicates,
                     restrict_to_manifest=args.restrict_to_manifest, skip_failed=args.skip_failed,
                     allow_protocol_change=args.allow_protocol_change)
    path = run.save(args.state)
    if args.restrict_to_manifest:
        print(f"read the {len(run.state['looks'][-1]['items'])} items of batch {len(run.state['looks']):03d} from "
              f"NEW_RESULTS; left out its {run.n_left_out} other item(s) (--restrict-to-manifest)")
    if run.stopped:
        print(run._render(line_text), end="")  # the decision as text: decision.md escapes for Markdown
        print(f"written: {line_text(str(path))}")
    else:
        rule = run.state["rule"]
        if rule["kind"] == "adaptive":
            lo, hi = res.confidence_interval(1 - run.state["alpha"])
            print(f"look {len(run.state['looks'])}: {res.n_items:,} items, accuracy {res.accuracy:.4f} [{lo:.4f}, "
                  f"{hi:.4f}], ability {res.theta:.3f} (s.e. {res.standard_error:.3f}, target "
                  f"{rule['target_se']:g}): continue" + (f"; {note}" if (note := _few_models_note(run.state)) else "")
                  + (f"; out of range: {why}: the interval does not hold for this model"
                     if (why := run._adaptive_range_reason(res.accuracy)) else ""))
        else:
            what = f"difference vs {line_text(str(rule['against']))}" if rule["kind"] == "efficacy" else "score"
            # while the run continues the interval shown is the repeated one (its level holds at any look, whenever
            # the run stops); the precision rule stops on the fixed-sample interval, shown by its half-width only
            extra = ""
            if rule["kind"] == "precision" and "fixed_low" in res.trace:
                lo, hi = (float(res.trace[c].iloc[-1]) for c in ("fixed_low", "fixed_high"))
                extra = (f"; fixed-sample interval of half-width {(hi - lo) / 2:.4f}, the rule stops at "
                         f"{rule['half_width']:g} (half the width: the interval need not be centred on the score)")
            from .._shared import _level_percent

            level, lo, hi, side = res.confidence_level, res.ci_low, res.ci_high, ""
            if run._one_sided():  # the one-sided test's interval, at its level, as the decision's
                level, lo, hi = 1 - 2 * run.state["alpha"], res.low1, res.high1
                side = (f", its {'lower' if rule['alternative'] == 'greater' else 'upper'} end the one-sided "
                        f"{_level_percent(1 - run.state['alpha'])} % bound")
            print(f"look {len(run.state['looks'])}: {res.n:,} items, {what} {res.estimate:.4f}, "
                  f"{_level_percent(level)} % repeated interval [{lo:.4f}, {hi:.4f}] "
                  f"(valid at any look{side}){extra}: continue")
        print(f"batch {len(run.state['looks']) + 1}: {len(run.next_items):,} items in {line_text(str(path))}")
        _next_step(run, path, args.state)


def run(args: argparse.Namespace) -> int:
    """Run a workflow subcommand; exit status 2 with one line for bad input."""
    command = args.command + (f" {args.action}" if args.command == "sequential" else "")
    prog = f"effstats {command}"
    fn = {"select": _select, "estimate": _estimate, "sequential": _sequential}[args.command]
    given = getattr(args, "reference", None) is not None  # estimate's and sequential's --reference
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(_TerminalText(sys.stdout)):  # names from the data printed inertly
                fn(args)
                sys.stdout.flush()  # a full or closed stdout is reported here, with the command's name
            status = 0
        except (ValueError, FileNotFoundError) as exc:
            msg = _cli_names(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, command, given)
            msg = _folder_label(msg, args)
            from ..datasets._files import LeftOutPathsWarning

            # paths left out unread may be why (a task's only log a FIFO): said in the one line
            left = [str(w.message).splitlines()[0] for w in caught if issubclass(w.category, LeftOutPathsWarning)]
            if left:
                msg += f" ({_cli_names('; '.join(dict.fromkeys(left)), command, given)})"
            print(f"{prog}: error: {control_text(msg)}", file=sys.stderr)
            status = 2
        except BrokenPipeError:  # the reader stopped early (| head): effstats.cli.main ends quietly
            raise
        except OSError as exc:  # an output folder or file that cannot be written (read-only, full, name too long)
            print(f"{prog}: error: {control_text(os_error_line(exc, getattr(args, 'out', None)))}", file=sys.stderr)
            _quiet_stdout()
            status = 2
        except KeyboardInterrupt:  # the files written so far are whole (atomic writes): nothing to clean up
            print(f"{prog}: interrupted; files already written are complete, nothing half-written", file=sys.stderr)
            status = 130
    seen = set()
    for w in caught if status == 0 else ():  # a refusal is one line: its message says what to do
        if issubclass(w.category, UserWarning) and str(w.message) not in seen:
            seen.add(str(w.message))
            line = _cli_names(str(w.message).splitlines()[0], command, given)
            print(f"{prog}: warning: {control_text(line)}", file=sys.stderr)
    return status


def _folder_label(msg: str, args: argparse.Namespace) -> str:
    """``msg`` about a file in the folder the command writes (a record naming a key twice, a swap journal) led by
    the argument that named the folder: ``--out`` where the user gave it (select's and sequential start's folder,
    which the Python API calls ``directory``), none where estimate writes to its default folder (the message
    names the file's path; one about that folder itself names --out as the way to another)."""
    head, sep, rest = msg.partition(": ")
    if head not in ("DIR", "--out") or not sep or not hasattr(args, "out"):
        return msg
    if args.out is not None:
        folder, label = Path(args.out).expanduser(), "--out"
    elif getattr(args, "new_results", None) is not None and getattr(args, "manifest", None) is not None:
        folder, label = _report_dir(args.manifest, args.new_results)[0], None
    else:
        return msg
    shown = str(folder)
    if label is None:  # a file in the default folder; a message about the folder itself keeps naming --out
        return rest if rest.startswith(shown + "/") else msg
    return f"{label}: {rest}" if rest == shown or rest.startswith((shown + "/", shown + " ", shown + ",")) else msg


def os_error_line(exc: OSError, out: str | None = None) -> str:
    """One line for an OSError of writing a file or stdout: ``cannot write to PATH (reason)``, led by ``--out:``
    where the name given is at fault: PATH is the folder ``out`` (the command's ``--out``), or lies in it and is too
    long a name."""
    import errno
    import os

    if exc.filename is None:
        return f"cannot write to stdout ({exc.strerror or exc})"
    if os.path.isfile(exc.filename) and not os.access(exc.filename, os.R_OK):
        return f"cannot read {exc.filename} ({exc.strerror or exc})"
    name, folder = str(exc.filename), None if out is None else str(out)
    inside = folder is not None and name.startswith(os.path.join(folder, ""))
    arg = "--out: " if folder and (name == folder or inside and exc.errno == errno.ENAMETOOLONG) else ""
    return f"{arg}cannot write to {exc.filename} ({exc.strerror or exc})"


def _quiet_stdout() -> None:
    """Point stdout at devnull so that Python's final flush of a full stdout does not raise again."""
    import os

    try:
        sys.stdout.flush()
    except OSError:
        pass
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor (stdout replaced by an object in memory)
        pass


class _TerminalText(io.TextIOBase):
    """A text stream writing through :func:`effstats._escape.control_text` to another: what is printed shows its
    names escaped already (:func:`effstats._escape.line_text`, Markdown, reprs), and nothing is escaped twice."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, s: str) -> int:
        self._stream.write(control_text(s))
        return len(s)

    def flush(self) -> None:
        # IOBase's finaliser flushes: by then the stream written to (a caller's, pytest's capture) may be closed
        if not getattr(self._stream, "closed", False):
            self._stream.flush()


# the Python API's argument names, as the command line spells them
_CLI_NAMES = {"reference:": "REFERENCE:", "new_results:": "NEW_RESULTS:", "selection:": "DIR:", "directory:": "DIR:",
              "budget:": "--budget:", "target_error:": "--target-error:", "method:": "--method:", "seed:": "--seed:",
              "tasks:": "--tasks:", "metric:": "--metric:", "filter:": "--filter:", "against:": "--against:",
              "half_width:": "--half-width:", "initial:": "--initial:", "batch:": "--batch:", "max_n:": "--max-n:",
              "alpha:": "--alpha:", "model:": "--model:", "models:": "--model:", "confidence_level:": "--confidence:",
              "source_outputs:": "REFERENCE:", "responses:": "REFERENCE:", "rule:": "--rule:",
              "target_se:": "--target-se:", "spending:": "--spending:", "alternative:": "--alternative:",
              "split:": "--split:", "perturbation:": "--perturbation:", "trials:": "--trials:",
              "restrict_to_manifest:": "--restrict-to-manifest:", "skip_failed:": "--skip-failed:",
              "allow_protocol_change:": "--allow-protocol-change:",
              "target_outputs:": "NEW_RESULTS:",
              "duplicates:": "--duplicates:", "weights:": "--weights:", "format:": "--format:",
              "correction:": "--correction:"}


# values of the Python API as the command line spells them
_CLI_VALUES = {"(None: every split)": "(--split any: every split)", "or None (every split)": "or any (every split)",
               "(None: unperturbed)": "(no --perturbation: "
               "unperturbed)", "model: new_results hold": "--model: NEW_RESULTS hold",
               " in new_results": " in NEW_RESULTS", "models of new_results": "models of NEW_RESULTS",
               # the model's name as Python writes it, quoted: as a shell reads it back
               "name the one to evaluate: model=": "name the one to evaluate: --model "}


# options the messages name in Python's syntax (``tasks=['a', 'b']``, ``restrict_to_manifest=True``,
# ``duplicates='last', 'first' or 'mean'``): on the command line they read as typed
_PY_VALUE = r"\[[^\]]*\]|'[^']*'(?:, '[^']*')*(?:,? or '[^']*')?|True|-?\d+(?:\.\d+)?"
_PY_ASSIGN = re.compile(r"(?<![\w.-])(tasks|models|duplicates|restrict_to_manifest|skip_failed|allow_protocol_change|"
                        r"trials|split|perturbation|metric|filter|weights|method|format|budget|seed|target_error|"
                        r"confidence_level|initial)=(" + _PY_VALUE + ")")


def _typed(m: re.Match) -> str:
    name, value = m.group(1), m.group(2)
    option = _CLI_NAMES[name + ":"].rstrip(":")
    if value == "True":
        return option
    if value.startswith("["):
        try:
            items = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return m.group(0)
        return f"{option} {_tasks_option(items) if name in ('tasks', 'models') else ','.join(map(str, items))}"
    if value.startswith("'"):
        value = "|".join(re.findall(r"'([^']*)'", value))
    return f"{option} {value}"


def _as_typed(msg: str) -> str:
    """``msg`` with the Python forms of options written as typed, each said once (``restrict_to_manifest=True
    (--restrict-to-manifest)`` becomes ``--restrict-to-manifest``)."""
    msg = _PY_ASSIGN.sub(_typed, msg)
    opt = r"(--[a-z][\w-]*(?: [^\s();]+)?)"
    msg = re.sub(opt + r" \(\1\)", r"\1", msg)
    msg = re.sub(opt + r" \(\1; ", r"\1 (", msg)
    return re.sub(r"\(" + opt + r", \1\)", r"(\1)", msg)


def _cli_names(msg: str, command: str, reference_given: bool = True) -> str:
    for python, cli in _CLI_VALUES.items():
        msg = msg.replace(python, cli)
    msg = _as_typed(msg)
    head, sep, rest = msg.partition(" ")
    # --reference is an option of these commands, the positional REFERENCE of the others; without it they read
    # the reference data DIR keeps (or the path it records)
    if command in ("estimate", "sequential update", "sequential status") and head == "reference:":
        return ("--reference:" if reference_given else "the reference data of DIR:") + sep + rest
    return _CLI_NAMES.get(head, head) + sep + rest
