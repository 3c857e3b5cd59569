"""The workflow's method names and file names, apart from the fits so that the command line builds its parser
without importing pandas or SciPy."""

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
MANIFEST = "manifest.json"
LM_EVAL_SAMPLES = "lm_eval_samples.json"
HELM_INSTANCES = "helm_instances.json"
