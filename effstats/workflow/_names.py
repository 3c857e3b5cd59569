"""The workflow's method names and file names, and the shell quoting of the names its commands print, apart from the
fits so that the command line builds its parser without importing pandas or SciPy."""
import shlex  # the printed commands are pasted into a shell: every name from the data is quoted

__all__ = ["METHODS", "MANIFEST", "LM_EVAL_SAMPLES", "HELM_INSTANCES"]

#: The item selection and estimation methods of :func:`effstats.workflow.select` (``effstats select --method``);
#: its ``method`` parameter says what each does.
#:
#: Examples
#: --------
#: >>> from effstats.workflow import METHODS
#: >>> METHODS[:3], len(METHODS)
#: (('sortsearch', 'aipw', 'auto'), 12)
METHODS = ("sortsearch", "aipw", "auto", "hybrid", "disco", "mrmr", "random-learn", "tinybenchmarks", "anchor",
           "stratified", "random", "stratified-aipw")
# The methods whose items at a given budget do not depend on the seed: "hybrid" takes Sort & Search's uniform
# positions on the reference models' order (Prabhu et al. 2024's deterministic sampling; its seed only sets the
# cross-validation folds of its per-item predictions, which the estimate does not use), "mrmr" its greedy
# relevance-redundancy order. A budget searched for by a target error still depends on the seed (its folds).
_SEEDLESS = ("hybrid", "mrmr")
# The whole-benchmark scores: the mean over all items ("items") or the mean of the task means ("tasks"); select
# splits its budget for one of them, estimate reports either (effstats select / estimate --weights)
WEIGHTS = ("items", "tasks")
SCORES = {"items": "the mean over all items", "tasks": "the mean of the task means"}  # as the reports name them
MANIFEST = "manifest.json"
LM_EVAL_SAMPLES = "lm_eval_samples.json"
HELM_INSTANCES = "helm_instances.json"
# a sequential batch's item ids as written in the state (items.csv shows them for eyes, csv_safe)
ITEMS_JSON = "items.json"


def _lm_eval_comma_note(tasks) -> str:
    """What an ``lm_eval --tasks a,b`` suggestion must add when a task's name holds a comma: lm_eval splits --tasks
    at every comma (no escape), so no quoting passes such a name; '' when none does."""
    bad = [str(t) for t in tasks if "," in str(t)]
    if not bad:
        return ""
    return (f"lm_eval splits --tasks at commas and cannot take the task name{'s' if len(bad) > 1 else ''} "
            f"{', '.join(map(repr, bad))}: rename {'them' if len(bad) > 1 else 'it'} in the reference and in lm_eval")


def _tasks_option(tasks) -> str:
    """The value of effstats' own ``--tasks`` for these names, as typed in a shell: a comma inside a name written
    ``\\,`` (how --tasks reads it), the whole one word a shell reads back exactly (:func:`_shell_word`)."""
    return _shell_word(",".join(str(t).replace(",", "\\,") for t in tasks))


def _shell_word(text: str) -> str:
    """``text`` as one word a POSIX shell reads back exactly: :func:`shlex.quote`, or for text holding a control or
    other unprintable character (an escape, a line feed) bash's ``$'...'`` with that character escaped, so that the
    printed command stays one line and pastes as the same name."""
    if text.isprintable():
        return shlex.quote(text)
    out = []
    for ch in text:
        if ch in "\\'":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that is not UTF-8 (surrogateescape): that byte
                out.append(f"\\x{code - 0xDC00:02x}")
                continue
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return "$'" + "".join(out) + "'"
