"""JSON schemas of the loop's saved files (``manifest.json``, ``state.json``), checked on load.

A file edited by hand, truncated by another tool or written by someone else is refused with one line naming the
field (``looks[0].items[3]``, ``rule.kind``), not a KeyError later or a run that goes on with nonsense. The
schemas fix the types and ranges of the fields the loop reads; fields they do not name are allowed (later
versions add some). :func:`check` adds what a schema cannot say: lists that go together have equal lengths, and
the looks of a run are its items in order.
"""
from __future__ import annotations

import math
from pathlib import PurePosixPath
from typing import Any

from ._names import METHODS

__all__ = ["check", "check_checksums", "checksums", "safe_relative"]


def safe_relative(rel: Any) -> bool:
    """``rel`` is a relative path inside its folder (no root, no ``..``, no empty part): safe to remove."""
    if not isinstance(rel, str) or not rel or "\0" in rel or "\\" in rel:
        return False
    p = PurePosixPath(rel)
    return not p.is_absolute() and all(part not in ("", ".", "..") for part in p.parts)


_STR = {"type": "string"}
_STR_OR_NULL = {"type": ["string", "null"]}
_COUNT = {"type": "integer", "minimum": 0}
_SIZE = {"type": "integer", "minimum": 1}
# one name, or one per task ({"gsm8k": "exact_match", "*": "acc"})
_PER_TASK = {"type": ["string", "null", "object"], "additionalProperties": _STR}
_FINITE = {"type": "number", "minimum": -1e300, "maximum": 1e300}  # finite (JSON's 1e400 reads as inf)

_REFERENCE = {
    "type": "object",
    "required": ["sha256", "n_models", "n_items"],
    "properties": {
        "source": _STR_OR_NULL, "format": _STR, "layout": _STR, "metric": _PER_TASK, "filter": _PER_TASK,
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"}, "n_models": _SIZE, "n_items": _SIZE,
        "n_missing": _COUNT, "kind": _STR, "tasks": {"type": ["array", "null"], "items": _STR},
        "model_ids": {"type": "array", "items": _STR},
        # lm-eval models left out: a results file but no samples (a run without --log_samples)
        "without_samples": {"type": "array", "items": _STR},
        "arrays_sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        # lm-eval logs: each task's kind (workflow._task_kinds)
        "task_kinds": {"type": "object", "additionalProperties": {"enum": ["multiple-choice", "generation"]}},
        # lm-eval logs: the chosen documents' digests (three fields of 12 characters side by side) and the tasks'
        # versions and few-shot counts; HELM runs: the scenarios' adapter specs (workflow._provenance)
        "lm_eval": {"type": "object", "properties": {
            "hashes": {"type": "object", "additionalProperties": {"type": "string", "minLength": 36, "maxLength": 36}},
            "runs": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": _STR}}}},
    },
}

MANIFEST = {
    "type": "object",
    "required": ["format", "method", "budget", "seed", "reference", "tasks", "items", "item_tasks", "doc_ids"],
    "properties": {
        "format": {"const": "effstats.manifest/1"},
        "effstats_version": _STR, "created": _STR,
        "method": {"enum": list(METHODS)}, "budget": _SIZE, "seed": _COUNT, "reference": _REFERENCE,
        "tasks": {"type": "object", "minProperties": 1, "additionalProperties": {
            "type": "object", "required": ["n_items", "budget", "method"],
            "properties": {"n_items": _SIZE, "budget": _COUNT, "n_chosen": _COUNT, "method": _STR}}},
        "items": {"type": "array", "minItems": 1, "items": _STR, "uniqueItems": True},
        "item_tasks": {"type": "array", "items": _STR},
        "doc_ids": {"type": "array", "items": {"type": "integer", "minimum": -1}},  # -1: the item is no document
        "lm_eval_samples": {"type": ["object", "null"],
                            "additionalProperties": {"type": "array", "items": {"type": "integer", "minimum": 0}}},
        "budget_curve": {"type": ["array", "null"], "items": {"type": "object"}},
        "shortfall": _STR_OR_NULL, "new_results_note": _STR_OR_NULL,
        "files": {"type": "array", "items": _STR},
    },
}

STATE = {
    "type": "object",
    "required": ["format", "reference", "rule", "alpha", "initial", "batch", "max_n", "order", "tasks", "doc_ids",
                 "model", "looks", "status", "result"],
    "properties": {
        "format": {"const": "effstats.sequential/1"},
        "effstats_version": _STR, "created": _STR, "reference": _REFERENCE,
        "rule": {"type": "object", "required": ["kind"], "properties": {
            "kind": {"enum": ["precision", "efficacy", "adaptive"]},
            "against": _STR_OR_NULL, "alternative": {"enum": ["two-sided", "greater", "less", None]},
            "half_width": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1e300},
            "target_se": {"type": "number", "exclusiveMinimum": 0, "maximum": 1e300},
            "prior_sd": {"type": "number", "exclusiveMinimum": 0, "maximum": 1e300},
            "calibration_error": {"type": "boolean"}, "correction": {"enum": ["logistic", None]}}},
        "alpha": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5},
        "spending": _STR_OR_NULL, "initial": _SIZE, "batch": _SIZE, "max_n": _SIZE, "seed": _COUNT,
        "n_eligible": _SIZE, "next_batch": {"type": ["integer", "null"], "minimum": 1}, "fpc": {"type": "boolean"},
        "duplicates": {"enum": ["last", "first", "mean", "error"]},
        "order": {"type": "array", "items": _STR, "uniqueItems": True},
        "strata": {"type": "array", "items": _COUNT}, "look_sizes": {"type": "array", "items": _SIZE},
        "tasks": {"type": "array", "items": _STR},
        "doc_ids": {"type": "array", "items": {"type": "integer"}},
        "against_scores": {"type": ["array", "null"], "items": {"type": ["number", "null"]}},
        "model": _STR_OR_NULL,
        "looks": {"type": "array", "items": {
            "type": "object", "required": ["items", "scores"],
            "properties": {"items": {"type": "array", "minItems": 1, "items": _STR},
                           "scores": {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1}},
                           "theta": _FINITE, "theta_se": _FINITE, "accuracy": _FINITE, "accuracy_se": _FINITE,
                           # what the look's new runs were made otherwise than the reference runs
                           # (allow_protocol_change)
                           "protocol_changes": {"type": "array", "items": _STR}}}},
        # items dropped after returning no result (skip_failed): each with its position in the start's order, what
        # went with it there, and the look that dropped it
        "dropped": {"type": "array", "items": {
            "type": "object", "required": ["position", "order"],
            "properties": {"position": _COUNT, "look": _SIZE, "order": _STR, "tasks": _STR,
                           "doc_ids": {"type": "integer"},
                           "against_scores": {"type": ["number", "null"]}}}},
        "status": {"enum": ["continue", "stopped"]},
        "result": {"type": ["object", "null"]},
        "files": {"type": "array", "items": _STR},
        "checksums": {"type": "object", "additionalProperties": {"type": "string", "pattern": "^[0-9a-f]{64}$"}},
    },
}

_SCHEMAS = {"effstats.manifest/1": MANIFEST, "effstats.sequential/1": STATE}


def _where(path: Any) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(the document)"


def _short(v: Any, limit: int = 60) -> str:
    """A value for a message: short, one line, never the whole of a large or deep structure."""
    if isinstance(v, (dict, list)):
        return f"a JSON {'object' if isinstance(v, dict) else 'array'}"
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    text = repr(v).replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"


_JSON_TYPES = {"object": "an object", "array": "an array", "string": "a string", "integer": "an integer",
               "number": "a number", "boolean": "true or false", "null": "null"}


def _say(err: Any) -> str:
    v, val = err.validator, err.validator_value
    got = _short(err.instance)
    if v == "type":
        want = " or ".join(_JSON_TYPES.get(t, t) for t in ([val] if isinstance(val, str) else val))
        return f"expected {want}, got {got}"
    if v in ("enum", "const"):
        return f"expected one of {list(val) if v == 'enum' else [val]}, got {got}"
    if v in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        if isinstance(err.instance, float) and not math.isfinite(err.instance):
            return f"expected a finite number, got {got}"
        op = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[v]
        return f"expected a number {op} {val:g}, got {got}"
    if v == "uniqueItems":
        return "holds the same entry twice"
    if v in ("minItems", "minProperties"):
        return "is empty"
    if v == "pattern":
        return f"expected a SHA-256 hex digest, got {got}"
    return f"not valid ({v})"


def _validator(jsonschema: Any) -> Any:
    """Draft 7 with JSON integers only: the schema's ``integer`` also matches 10.0, which the loop would use as a
    count or a slice bound (a float there fails in numpy and in slicing)."""
    strict = jsonschema.Draft7Validator.TYPE_CHECKER.redefine(
        "integer", lambda checker, x: isinstance(x, int) and not isinstance(x, bool))
    return jsonschema.validators.extend(jsonschema.Draft7Validator, type_checker=strict, validators={
        k: _bounded(jsonschema, jsonschema.Draft7Validator.VALIDATORS[k])
        for k in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")})


def _bounded(jsonschema: Any, check_bound: Any) -> Any:
    """A bound that NaN fails (JSON's ``NaN`` reads as a float, and every comparison with it is false, so
    jsonschema's own bounds let it through)."""
    def validate(validator: Any, bound: Any, instance: Any, schema: Any) -> Any:
        if isinstance(instance, float) and math.isnan(instance):
            yield jsonschema.ValidationError(f"{instance!r} is not a number within {bound!r}")
            return
        yield from check_bound(validator, bound, instance, schema)
    return validate


def check(doc: Any, fmt: str, shown: str) -> None:
    """Raise one ValueError naming ``shown`` and the field when ``doc`` is not a valid file of format ``fmt``."""
    import jsonschema

    schema = _SCHEMAS.get(fmt)
    if schema is None:
        return
    try:
        errors = _validator(jsonschema)(schema).iter_errors(_short_lists(doc, schema))
        err = jsonschema.exceptions.best_match(errors)
    except RecursionError:
        raise ValueError(f"{shown}: nested too deeply to be an effstats file") from None
    if err is not None:
        path = list(err.absolute_path)
        if err.validator == "required" and isinstance(err.instance, dict):
            path += [k for k in err.validator_value if k not in err.instance][:1]
            raise ValueError(f"{shown}: {_where(path)}: missing")
        raise ValueError(f"{shown}: {_where(path)}: {_say(err)}")
    (_check_state if fmt == "effstats.sequential/1" else _check_manifest)(doc, shown)


_PY_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "null": (type(None),)}


def _short_lists(doc: Any, schema: dict) -> Any:
    """``doc`` with each top-level list of plain values that plainly meets its schema (every entry of the right type,
    above its minimum, unique where asked) cut to its first entry: a state's item order, tasks and scores run to the
    benchmark's size, and jsonschema takes about a second over 60,000 items of each. A list with any doubtful entry
    stays whole, so that jsonschema names the entry."""
    if not isinstance(doc, dict):
        return doc
    out = dict(doc)
    for k, sub in schema.get("properties", {}).items():
        v, items = doc.get(k), sub.get("items") if isinstance(sub, dict) else None
        if type(v) is not list or len(v) < 2 or not isinstance(items, dict) or set(items) - {"type", "minimum"}:
            continue
        kinds = items["type"] if isinstance(items["type"], list) else [items["type"]]
        if any(t not in _PY_TYPES for t in kinds):
            continue
        allowed = tuple(c for t in kinds for c in _PY_TYPES[t])
        low = items.get("minimum")
        # type(), not isinstance: a bool is no integer or number to jsonschema
        if not all(type(x) in allowed and (low is None or x is None or x >= low) for x in v):
            continue
        if sub.get("uniqueItems") and len(set(v)) != len(v):
            continue
        out[k] = v[:1]
    return out


def _same_length(doc: dict, keys: tuple[str, ...], shown: str) -> None:
    n = len(doc[keys[0]])
    for k in keys[1:]:
        if len(doc[k]) != n:
            raise ValueError(f"{shown}: {k}: {len(doc[k])} entries, but {keys[0]} has {n}")


def _check_files(doc: dict, shown: str) -> None:
    for k, f in enumerate(doc.get("files", [])):
        if not safe_relative(f):
            raise ValueError(f"{shown}: files[{k}]: {_short(f)} is not a path inside the run's folder")


def _check_manifest(m: dict, shown: str) -> None:
    _check_files(m, shown)
    _same_length(m, ("items", "item_tasks", "doc_ids"), shown)
    unknown = sorted(set(m["item_tasks"]) - set(m["tasks"]))
    if unknown:
        raise ValueError(f"{shown}: item_tasks: task {_short(unknown[0])} is not among the manifest's tasks")
    first: dict = {}  # (task, document) -> its first entry: one document of a task is one item
    for k, (t, d) in enumerate(zip(m["item_tasks"], m["doc_ids"])):
        if d >= 0 and first.setdefault((t, d), k) != k:
            raise ValueError(f"{shown}: doc_ids[{k}]: document {d} of task {_short(t)} is doc_ids[{first[(t, d)]}] "
                             "too")


def _check_state(st: dict, shown: str) -> None:
    rule = st["rule"]
    _check_files(st, shown)
    _same_length(st, ("order", "tasks", "doc_ids"), shown)
    if rule["kind"] == "efficacy":
        if not isinstance(rule.get("against"), str):
            raise ValueError(f"{shown}: rule.against: rule 'efficacy' needs the reference model's name")
        if not isinstance(st.get("against_scores"), list) or len(st["against_scores"]) != len(st["order"]):
            raise ValueError(f"{shown}: against_scores: rule 'efficacy' needs one score per item of the order")
    elif rule["kind"] == "precision" and not isinstance(rule.get("half_width"), (int, float)):
        raise ValueError(f"{shown}: rule.half_width: rule 'precision' needs a positive number")
    elif rule["kind"] == "adaptive":
        for k in ("target_se", "prior_sd"):
            if k not in rule:
                raise ValueError(f"{shown}: rule.{k}: missing key {k!r} (rule 'adaptive' needs it)")
    if rule["kind"] != "adaptive":
        _check_spending(st, shown)
        _check_corrected(st, shown)
    if rule["kind"] != "adaptive" and st.get("n_eligible", len(st["order"])) < len(st["order"]):
        raise ValueError(f"{shown}: n_eligible: {st['n_eligible']} is fewer than the {len(st['order'])} items of the "
                         "order")
    if st.get("n_eligible", 0) > st["reference"]["n_items"]:
        raise ValueError(f"{shown}: n_eligible: {_short(st['n_eligible'])} is more than the reference's "
                         f"{st['reference']['n_items']} items")
    if rule["kind"] != "adaptive" and st["max_n"] > len(st["order"]):
        raise ValueError(f"{shown}: max_n: {st['max_n']} is more than the {len(st['order'])} items of the order")
    if st["initial"] > st["max_n"]:
        raise ValueError(f"{shown}: initial: {st['initial']} is more than max_n={st['max_n']}")
    _check_dropped(st, shown)
    k = 0
    order = st["order"]
    for j, look in enumerate(st["looks"]):
        if len(look["scores"]) != len(look["items"]):
            raise ValueError(f"{shown}: looks[{j}].scores: {len(look['scores'])} scores for "
                             f"{len(look['items'])} items")
        for i, item in enumerate(look["items"]):
            if k >= len(order) or order[k] != item:
                what = "was never handed out in this run" if item not in set(order) else "is out of the run's order"
                raise ValueError(f"{shown}: looks[{j}].items[{i}]: {_short(item)} {what}")
            k += 1
    if st["status"] == "stopped" and not isinstance(st["result"], dict):
        raise ValueError(f"{shown}: result: a stopped run needs its decision")
    if st["status"] == "continue" and st["result"] is not None:
        raise ValueError(f"{shown}: status: 'continue', but the run holds a decision")


def _check_dropped(st: dict, shown: str) -> None:
    """The dropped items go back to distinct places of the start's order, are no longer in the order, and carry an
    entry for each list of the order that goes with them."""
    dropped = st.get("dropped") or []
    total, seen, order = len(st["order"]) + len(dropped), set(), set(st["order"])
    for j, d in enumerate(dropped):
        if d["position"] >= total or d["position"] in seen:
            raise ValueError(f"{shown}: dropped[{j}].position: {d['position']} is "
                             + ("another dropped item's" if d["position"] in seen else
                                f"past the {total} items of the start's order"))
        seen.add(d["position"])
        if d["order"] in order:
            raise ValueError(f"{shown}: dropped[{j}].order: {_short(d['order'])} is still in the run's order")
        for k in ("tasks", "doc_ids", "against_scores"):
            if st.get(k) is not None and k not in d:
                raise ValueError(f"{shown}: dropped[{j}].{k}: missing (the run's {k} has an entry per item)")


# the lists a run of rule "precision" or "efficacy" fixes at its start (its item order drawn with its seed, and what
# goes with each item), each read as the type its schema gives: another tool's rewrite of the file as JSON (1.0 as
# 1) keeps the checksum
_FIXED = {"order": str, "tasks": str, "doc_ids": int, "against_scores": float}


def checksums(st: dict) -> dict[str, str]:
    """SHA-256 of each list a random-order run fixes at its start, keyed by the reference data's content hash and
    the seed; a run of rule "adaptive" hands out its items one batch at a time and has none."""
    import hashlib
    import json

    if st["rule"]["kind"] == "adaptive":
        return {}
    out = {}
    for k, kind in _FIXED.items():
        if st.get(k) is not None:
            values = list(st[k])
            for d in st.get("dropped") or ():  # items dropped after failing, back at the start's positions
                values.insert(int(d["position"]), d.get(k))
            values = [None if v is None else kind(v) for v in values]
            text = json.dumps([st["reference"]["sha256"], st.get("seed"), values])
            out[k] = hashlib.sha256(text.encode()).hexdigest()
    return out


def check_checksums(st: dict, shown: str) -> None:
    """Refuse a state whose fixed lists (the item order, its tasks, documents and the compared model's scores) are
    not those its start recorded: the order is a random draw with the state's seed from reference data the state
    does not hold, so an edit (its items not yet handed out replaced, say) can only be told from its checksum. A
    state without the field (written before checksums were recorded) is not checked; one with it must hold the
    checksum of every list its run fixes (an adaptive run fixes none)."""
    if "checksums" not in st:
        return
    saved = st["checksums"]
    now = checksums(st)
    missing = [k for k in now if k not in saved]
    if missing:
        raise ValueError(f"{shown}: checksums.{missing[0]}: missing (a run of rule {st['rule']['kind']!r} records "
                         f"the checksums of {', '.join(now)}); the file was edited: start the run again")
    for k in _FIXED:
        if k in saved and now.get(k) != saved[k]:
            what = "item order the run's start drew with" if k == "order" else f"{k} the run's start recorded with"
            raise ValueError(f"{shown}: {k}: not the {what} seed {st.get('seed')} (checksums.{k}); the file was "
                             "edited: start the run again")


def _check_spending(st: dict, shown: str) -> None:
    """The spending family of a group-sequential run: one that online updates can use (as its start checked)."""
    from ..sequential.spending import get_spending

    if "spending" not in st:
        raise ValueError(f"{shown}: spending: missing")
    try:
        sf = get_spending(st["spending"])
    except (TypeError, ValueError) as e:
        raise ValueError(f"{shown}: spending: {str(e).split(': ', 1)[-1]}") from None
    if sf.is_classic:
        raise ValueError(f"{shown}: spending: expected a spending function (ld_pocock, ld_obf, hsd, power), got "
                         f"{_short(st['spending'])}")


def _check_corrected(st: dict, shown: str) -> None:
    """A run with the logistic correction carries the strata of its order and its looks' sizes, which fix its
    batches; a run without it carries neither (``look_sizes`` would make its batches whole looks)."""
    rule, order = st["rule"], st["order"]
    if rule.get("correction") is None:
        held = [k for k in ("strata", "look_sizes") if k in st]
        if held:
            raise ValueError(f"{shown}: rule.correction: null, but the state holds the {held[0]} of a run with the "
                             "logistic correction")
        return
    if rule["kind"] != "precision":
        raise ValueError(f"{shown}: rule.correction: the logistic correction is an option of rule 'precision', got "
                         f"rule {_short(rule['kind'])}")
    for k in ("strata", "look_sizes"):
        if k not in st:
            raise ValueError(f"{shown}: {k}: missing (a run with the logistic correction needs it)")
    _same_length(st, ("order", "strata"), shown)
    sizes = st["look_sizes"]
    if sum(sizes) != len(order):
        raise ValueError(f"{shown}: look_sizes: {sum(sizes)} items in all, but the order has {len(order)}")
    if st["max_n"] != len(order):
        raise ValueError(f"{shown}: max_n: {st['max_n']}, but the order of a run with the logistic correction has "
                         f"{len(order)} items")
    if not sizes or sizes[0] != st["initial"]:
        raise ValueError(f"{shown}: initial: {st['initial']}, but the first look (look_sizes[0]) has "
                         f"{sizes[0] if sizes else 0} items")
    for j, look in enumerate(st["looks"]):
        if j >= len(sizes) or len(look["items"]) != sizes[j]:
            want = f"look_sizes[{j}] is {sizes[j]}" if j < len(sizes) else f"look_sizes has {len(sizes)} looks"
            raise ValueError(f"{shown}: looks[{j}].items: {len(look['items'])} items, but {want}")
