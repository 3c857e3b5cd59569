"""The notebook pages' Markdown converted in one pandoc run (docs/nb_markdown.py) is nbsphinx's own conversion.

Each text is converted on its own by ``nbsphinx.markdown2rst`` and in a batch with the others; the reST must be the
same string. The texts are the kinds the notebooks hold (headings, the same heading in two cells, math, LaTeX
blocks, lists and code at a cell's end, tables, links) and those the batch leaves alone.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

# one share for the whole module, make test's share 1/2 (this machine's stack, which has the docs' packages; Debian
# 13's run has no nbsphinx): the group's name decides it (conftest.py's share_key), checked by the last test
pytestmark = pytest.mark.xdist_group("docs-pandoc")
ROOT = Path(__file__).resolve().parents[1]
# nbsphinx itself is imported by the one test that converts (a fixture): the worker that does not run this module's
# group collects it too, and nbsphinx's import (sphinx, nbconvert) is a second of CPU
if importlib.util.find_spec("nbsphinx") is None:
    pytest.skip("the docs need python3-nbsphinx (pip install -e '.[docs]')", allow_module_level=True)
if shutil.which("pandoc") is None:
    pytest.skip("nbsphinx needs pandoc (Debian: apt-get install pandoc)", allow_module_level=True)

spec = importlib.util.spec_from_file_location("nb_markdown", ROOT / "docs" / "nb_markdown.py")
nb_markdown = importlib.util.module_from_spec(spec)
spec.loader.exec_module(nb_markdown)

BATCHED = [
    "# Sort & Search\n\nPredict a *new* model's **per-sample** correctness from `k` items.",
    "## Results\n\nThe MAE is $0.012$ at $k = 100$; the paper's is $0.013$.\n\n$$\\hat p = \\frac{1}{n}\\sum_i x_i$$",
    "## Results\n\n1. one\n2. two\n   - nested\n\n- last item of the cell",
    "### Code\n\n```python\nrm = load_lifelong_digits()\n```\n\n    indented code at the end",
    "| method | MAE |\n|---|---:|\n| random | 0.05 |\n| sortsearch | 0.01 |",
    "See [the paper](https://arxiv.org/abs/2402.19472) and [a section](#results).\n\n> a quote at the end",
    "\\begin{align}\na &= b \\\\\nc &= d\n\\end{align}",
    "Inline TeX \\alpha outside math, and \\textbf{bold}.",
    "Text ending in a line break  \nand a *lazy\nparagraph*",
    "",
    "**Claim.** ≈ +0.009 MAE for 10 vs 50 — unicode — and a trailing rule\n\n***",
]
ALONE = [
    "![a figure](figures/x.png)",
    "a <b>bold</b> word",
    "A footnote[^1].\n\n[^1]: the note",
    "[ref]: https://example.org\n\nsee [ref]",
    "see [Results] above",
    "# Same\n\ntext\n\n# Same",
    "Title\n=====",
    "```\nan unclosed fence",
    f"the marker {nb_markdown.MARKER}",
    ":   a definition of the paragraph before the cell",
    "~   another definition",
    "(@) an example, numbered through the document",
    "% a title block",
]


@pytest.mark.parametrize("text", ALONE)
def test_texts_whose_conversion_depends_on_the_document_are_left_alone(text):
    assert nb_markdown.alone(text)


@pytest.fixture(scope="module")
def nbsphinx():
    return pytest.importorskip("nbsphinx", reason="the docs need python3-nbsphinx (pip install -e '.[docs]')")


def test_batched_conversion_is_nbsphinxs_own(nbsphinx):
    assert not [t for t in BATCHED if nb_markdown.alone(t)]
    got = nb_markdown.convert(BATCHED + ALONE, nbsphinx)
    assert set(got) == set(BATCHED)
    for text in BATCHED:
        assert got[text] == nbsphinx.markdown2rst(text), text


def test_the_parser_reads_a_notebooks_texts_from_its_json():
    cell = {"cell_type": "markdown", "metadata": {}, "source": ["# A\n", "text"]}
    code = {"cell_type": "code", "metadata": {}, "source": "x", "execution_count": 1,
            "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"text/markdown": ["**b**"]}}]}
    nb = json.dumps({"cells": [cell, code], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    assert nb_markdown.notebook_texts(nb) == ["# A\ntext", "**b**"]
    assert nb_markdown.notebook_texts("a translated paragraph") == []


def test_the_module_runs_in_the_share_of_the_stack_with_the_docs_packages():
    import zlib

    assert zlib.crc32(f"group:{pytestmark.args[0]}".encode()) % 2 == 0  # --share 1/2
