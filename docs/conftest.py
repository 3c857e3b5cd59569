# pytest collects the user guide's examples (docs/**/*.rst, --doctest-glob in pyproject.toml); the Sphinx
# configuration, the templates and what the build writes into this folder are not tests.
collect_ignore = ["conf.py"]
collect_ignore_glob = ["_templates/*", "generated/*", "notebooks/*"]
