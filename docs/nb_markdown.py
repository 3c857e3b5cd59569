"""The notebook pages' Markdown, converted to reST in one pandoc run per notebook (``conf.py`` installs it).

nbsphinx converts each Markdown cell and each Markdown output on its own (``nbsphinx.markdown2rst``: two pandoc
processes, Markdown to pandoc's JSON and JSON to reST), and starting pandoc is most of what each conversion costs.
:func:`install` makes nbsphinx's parser convert a notebook's Markdown texts together, as one document whose texts
are separated by a paragraph holding a marker word, and split pandoc's reST at the markers; nbsphinx's conversion
then looks each text up. A text whose conversion could depend on the texts around it is converted on its own, as
nbsphinx converts it:

* raw HTML (nbsphinx's filter keeps state across HTML elements and collects ``<img>`` definitions at the end),
  images (numbered substitutions defined at the end of the document), footnotes, reference-style link definitions
  and bracketed text that is no inline link (an implicit reference to a heading, resolved within the document);
* a definition or table caption line (it binds to the block before it), an example list (numbered through the
  document), a title block (read only at a document's start);
* two headings with the same text (pandoc tells them apart by a numbered identifier, which reST then shows);
* an unclosed code fence, or the marker word itself.

Within a batch, headings get no automatic identifier (``-auto_identifiers``): on its own a heading's identifier is
the one reST derives from its text, so pandoc writes no label for it, and none either without the identifier; in one
document a heading whose text another one has would get a numbered identifier and a label. The result of every text
is the string nbsphinx's own conversion returns (``tests/test_docs_markdown.py`` checks both on tricky texts).
"""
from __future__ import annotations

import json
import re

MARKER = "nbsphinxbatchmarker7f3c"
# what makes a text's conversion depend on the document it is in (see the module's docstring)
_ALONE = re.compile(
    r"<[A-Za-z/!?]"                       # raw HTML
    r"|!\["                               # an image
    r"|\[\^"                              # a footnote
    r"|^ {0,3}\[[^\]\n]*\]:"              # a reference-style link definition
    r"|\](?![(\[])"                       # a bracket not followed by an inline link's target: [text] or [text][ref]
    r"|\\\]"                              # an escaped bracket (the check above cannot see through it)
    r"|^ {0,3}[:~][ \t]"                  # a definition or a table caption (they bind to the block before them)
    r"|\(@"                               # an example list (numbered through the document)
    r"|\A\s*%",                           # a title block (read only at the start of a document)
    re.M)
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$", re.M)
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$", re.M)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)


def alone(text: str) -> bool:
    """Whether ``text`` is converted on its own rather than in a batch."""
    if MARKER in text or _ALONE.search(text):
        return True
    headings = [h.strip() for h in _HEADING.findall(text)]
    if len(headings) != len(set(headings)) or _SETEXT.search(text):
        return True
    return len(_FENCE.findall(text)) % 2 == 1


def _latex(obj):
    """nbsphinx's pandoc filter without its HTML branches (no batched text has raw HTML): LaTeX blocks become
    display math and inline TeX nbsphinx's math role."""
    if obj.get("t") == "RawBlock" and obj["c"][0] == "latex":
        return {"t": "Para", "c": [{"t": "Math", "c": [{"t": "DisplayMath", "c": []},
                                                       "\x0e:nowrap:\x0f\n\n" + obj["c"][1]]}]}
    if obj.get("t") == "RawInline" and obj["c"][0] == "tex":
        return {"t": "RawInline", "c": ["rst", ":nbsphinx-math:`{}`".format(obj["c"][1])]}
    return obj


def convert(texts: list[str], nbsphinx) -> dict[str, str]:
    """reST for each of ``texts`` that can be batched, as ``nbsphinx.markdown2rst(text)`` returns it."""
    batch = sorted({t for t in texts if not alone(t)})
    if len(batch) < 2:
        return {}
    fmt = "markdown-implicit_figures-native_divs+raw_html-auto_identifiers"
    source = f"\n\n{MARKER}\n\n".join(batch)
    rst = nbsphinx.pandoc(source, fmt, "rst", filter_func=lambda s: json.dumps(json.loads(s, object_hook=_latex)))
    pieces = re.split(rf"^{MARKER}$", rst, flags=re.M)
    if len(pieces) != len(batch):
        return {}  # a text swallowed a marker: every text is converted on its own
    out = {}
    for text, piece in zip(batch, pieces):
        piece = piece.strip("\n")
        # what nbsphinx.markdown2rst does to pandoc's output (its filter turns LaTeX blocks into :nowrap: math)
        piece = re.sub(r"^\n( *)\x0e:nowrap:\x0f$", r"\1:nowrap:", piece, flags=re.M)
        out[text] = piece + "\n\n"
    return out


def notebook_texts(inputstring: str) -> list[str]:
    """The Markdown cells and Markdown outputs of a notebook's JSON (none when it is not a notebook)."""
    try:
        nb = json.loads(inputstring)
        cells = nb["cells"]
    except (ValueError, KeyError, TypeError):
        return []

    def text(src):
        return "".join(src) if isinstance(src, list) else src

    texts = []
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            texts.append(text(cell.get("source", "")))
        for output in cell.get("outputs", []):
            md = output.get("data", {}).get("text/markdown")
            if md is not None:
                texts.append(text(md))
    return [t for t in texts if isinstance(t, str)]


def install(nbsphinx) -> None:
    """Make nbsphinx convert each notebook's batchable Markdown in one pandoc run (no-op where its functions differ)."""
    parser = getattr(nbsphinx, "NotebookParser", None)
    single = getattr(nbsphinx, "markdown2rst", None)
    if parser is None or single is None or not callable(getattr(nbsphinx, "pandoc", None)):
        return
    if getattr(single, "batched", False):
        return
    cache: dict[str, str] = {}

    def markdown2rst(text):
        found = cache.get(text)
        return found if found is not None else single(text)

    markdown2rst.batched = True
    parse = parser.parse

    def batched_parse(self, inputstring, document):
        cache.clear()
        cache.update(convert(notebook_texts(inputstring), nbsphinx))
        try:
            return parse(self, inputstring, document)
        finally:
            cache.clear()

    nbsphinx.markdown2rst = markdown2rst
    parser.parse = batched_parse
