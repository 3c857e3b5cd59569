"""Names from the user's data made inert in the reports: HTML, Markdown and CSV.

Model, task, scenario and item names come from files nobody here wrote. In a report they are text: an
``<img onerror=…>`` in a task name must not run in ``estimate.html``, a ``<script>`` or ``[link](…)`` must not
become markup in a Markdown report, a ``|`` or a newline must not break a table, and a cell ``=HYPERLINK(…)`` must
not become a live formula when the CSV is opened in a spreadsheet.
"""
from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas loads in the functions that take frames: the command line's parser imports this module
    import pandas as pd

__all__ = ["html_text", "md_text", "md_prose", "csv_cell", "csv_safe", "html_safe", "terminal_text", "control_text",
           "line_text"]

# CommonMark's backslash escapes for the characters that start markup in inline text: HTML tags and entities
# (< >, and & where it starts a character reference), links and images ([ ]), code (`), emphasis (*), strike-through
# (~, GitHub's tables), tables (|) and the escape itself; an underscore too, but between two letters or digits:
# names are full of those (arc_easy), and there an underscore starts no emphasis, while "__x__" would show bold.
_MD_SPECIAL = re.compile(r"([\\`*~\[\]<>|]|(?<![^\W_])_|_(?![^\W_])|&(?=#?\w+;))")
# the spaces that Markdown and HTML collapse or trim: at the start, at the end, and after another space
_HIDDEN_SPACES = re.compile(r"^ | (?= *\Z)|(?<= ) ")
_MD_PROSE = re.compile(r"([\\\[\]<>|]|&(?=#?\w+;))")  # the same but emphasis and code spans
_LINE_BREAKS = re.compile(r"[\r\n\t\v\f\x85\u2028\u2029]+")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|nan)", re.I)


# Unicode's format characters (category Cf, as of Unicode 15.1, whatever the running Python's unicodedata knows):
# invisible, they make two names look alike ("ab", "a\u200bb") and the bidirectional ones among them make a terminal
# or an editor show text in another order than it is
_FORMAT = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
           "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
           "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f")
# the rest of Unicode's default-ignorable code points (DerivedCoreProperties.txt), outside category Cf: the combining
# grapheme joiner, the Hangul fillers, Khmer's inherent vowels, the Mongolian and the other variation selectors and
# the unassigned ones, all drawn as nothing ("cd" and "c\u3164d" look alike)
_IGNORABLE = ("\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2065\u3164\ufe00-\ufe0f\uffa0\ufff0-\ufff8"
              "\U000e0000-\U000e0fff")
# spaces other than U+0020 (category Zs) and the blank Braille pattern: drawn as (or nearly as) a space, so that
# "a b" and "a\u3000b" look alike
_SPACES = "\xa0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800"
# control characters but line feed and tab (terminal escape sequences start with ESC), format and other invisible
# characters, look-alike spaces, and the line and paragraph separators, which terminals show in different ways
# and lone surrogates: the bytes of a file name that are not UTF-8, as Python holds them (no UTF-8 text can)
_SHOWN = "\x00-\x08\x0b-\x1f\x7f-\x9f" + _FORMAT + _IGNORABLE + _SPACES + "\u2028\u2029\ud800-\udfff"
_CONTROL = re.compile(f"[{_SHOWN}]")
# the same but the carriage return, which a CSV cell keeps before a line feed (see csv_cell)
_CSV_CONTROL = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_FORMAT}{_IGNORABLE}{_SPACES}\u2028\u2029]")
# the same and tabs and line feeds too: text kept on one line (a table cell, a line of a terminal, a figure label)
_LINE_CONTROL = re.compile(f"[\t\n{_SHOWN}]")


def _escapes(m: re.Match) -> str:
    c = m.group()
    if "\udc80" <= c <= "\udcff":  # a byte of a file name that is not UTF-8 (surrogateescape): that byte, \xNN
        return f"\\x{ord(c) - 0xdc00:02x}"
    return c.encode("unicode_escape").decode("ascii")


# a backslash (with the backslashes before it) that starts what reads as an escape (\x1b, \u202e, \U0001f600) or
# stands before a character shown as an escape (which becomes one): in a name it is doubled, so that a name holding
# the text "\u202e" never shows as one holding the character, nor a backslash before the character as that text
_ESCAPE_LIKE = re.compile(rf"\\(?=\\*(?:x[0-9a-fA-F]{{2}}|u[0-9a-fA-F]{{4}}|U[0-9a-fA-F]{{8}}|[{_SHOWN}]))")

# and before the text of a carriage return's escape (\r), which a terminal line shows
_TERMINAL_ESCAPE_LIKE = re.compile(rf"\\(?=\\*(?:x[0-9a-fA-F]{{2}}|u[0-9a-fA-F]{{4}}|U[0-9a-fA-F]{{8}}|r|[{_SHOWN}]))")



def terminal_text(text: str) -> str:
    r"""A name's ``text`` with control characters (but line feeds and tabs), format characters (bidirectional
    overrides, zero-width spaces: Unicode category Cf), the other characters Unicode draws as nothing (default
    ignorable: Hangul fillers, variation selectors), spaces other than U+0020 (no-break, ideographic) and line
    separators written as escapes (``\x1b``, ``\u200b``, ``\u3164``, ``\xa0``), so that a name printed to a
    terminal cannot move the cursor, recolour or hide what follows, nor look like another name;
    unambiguously: a backslash that would read as the start of an escape is doubled first, so that a name holding
    the text ``\u202e`` shows as ``\\u202e``. Other text (``C:\users``, plain names) is unchanged.

    Examples
    --------
    >>> from effstats._escape import terminal_text
    >>> print(terminal_text("model\x1b[2J\u202eevil"))
    model\x1b[2J\u202eevil
    >>> print(terminal_text("a\u202eb"), terminal_text("a\\u202eb"), terminal_text("C:\\users"))
    a\u202eb a\\u202eb C:\users
    >>> print(terminal_text("a\u200bb"), terminal_text("a\ufeffb"), terminal_text("c\u3164d"), terminal_text("a\xa0b"))
    a\u200bb a\ufeffb c\u3164d a\xa0b
    """
    return control_text(_TERMINAL_ESCAPE_LIKE.sub(r"\\\\", text))


# the same for text kept on one line: also before an escape of a tab or a line break (\t, \n, \r) and before
# those characters themselves
_BREAK_ESCAPE_LIKE = re.compile(rf"\\(?=\\*(?:x[0-9a-fA-F]{{2}}|u[0-9a-fA-F]{{4}}|U[0-9a-fA-F]{{8}}|[tnr]|"
                                rf"[\t\n{_SHOWN}]))")


def line_text(text: str) -> str:
    r"""A name's ``text`` on one line, every character a terminal or a font would not show as itself written as an
    escape: control characters and bidirectional overrides as :func:`terminal_text` writes them, and tabs and line
    breaks too (``\t``, ``\n``, ``\r``; other line separators by their code, ``\x85``, ``\u2028``),
    unambiguously: a backslash that would read as the start of an escape is doubled
    first, so that a name holding a tab shows as ``\t`` and one holding the text ``\t`` as ``\\t``.

    Examples
    --------
    >>> from effstats._escape import line_text
    >>> print(line_text("a\tb"), line_text("a\\tb"), line_text("new\nline"), line_text("C:\\users"))
    a\tb a\\tb new\nline C:\users
    """
    return _LINE_CONTROL.sub(_escapes, _BREAK_ESCAPE_LIKE.sub(r"\\\\", text))


def control_text(text: str) -> str:
    r"""``text`` that already shows its names unambiguously (a report's Markdown, a message naming values by their
    ``repr``, a shell command) with any control character (but line feeds and tabs) and bidirectional override
    left in it written as an escape: the last filter before a terminal, which must not escape twice.

    Examples
    --------
    >>> from effstats._escape import control_text
    >>> print(control_text(repr("a\u202eb") + " \x1b[2J"))
    'a\u202eb' \x1b[2J
    """
    return _CONTROL.sub(_escapes, text)


def html_text(x: Any) -> str:
    r"""A name ``x`` as HTML text on one line (``<``, ``>``, ``&`` and quotes escaped; control, format and other
    invisible characters, look-alike spaces, tabs and line breaks shown as escapes, unambiguously, as by
    :func:`line_text`): a browser shows a tab or a line feed as a space. The spaces a browser collapses or trims
    (at the start, at the end, and each after another space) are written ``\x20``, so that ``"a  b"`` does not
    show as ``"a b"`` nor ``" a"`` as ``"a"``; a single space between words stays a space.

    Examples
    --------
    >>> from effstats._escape import html_text
    >>> html_text("<img src=x onerror=alert(1)>")
    '&lt;img src=x onerror=alert(1)&gt;'
    >>> print(html_text("a\u202eb"), html_text("a\\u202eb"), html_text("a\tb"))
    a\u202eb a\\u202eb a\tb
    >>> print(html_text("a  b"), html_text(" a "), html_text("a b"), html_text("a\u3000b"), html_text("c\u3164d"))
    a \x20b \x20a\x20 a b a\u3000b c\u3164d
    """
    return html.escape(_spaces_shown(line_text(str(x))), quote=True)


def _spaces_shown(text: str) -> str:
    """``text`` (with its backslashes escaped already) with the spaces that HTML and Markdown collapse or trim
    written as ``\x20``."""
    return _HIDDEN_SPACES.sub(r"\\x20", text)


def md_text(x: Any) -> str:
    r"""``x`` as literal Markdown text, fit for a table cell: markup characters backslash-escaped (``_`` only where
    it could start or end emphasis, not between two letters or digits: ``arc_easy`` stays as it is, ``__x__`` does
    not show bold); line breaks, tabs, control, format and other invisible characters and look-alike spaces as
    escapes, unambiguously (:func:`line_text`), so that a name stays on its line and in its cell and two names
    never show alike (``a\nb`` is not ``a b``). The spaces Markdown collapses or trims (at the start, at the end,
    and each after another space) are written ``\x20``, as :func:`html_text` writes them.

    Examples
    --------
    >>> from effstats._escape import md_text
    >>> print(md_text("<script>x</script> | [a](b)\nnext"), md_text("a\tb"), md_text("a b"))
    \<script\>x\</script\> \| \[a\](b)\nnext a\tb a b
    >>> print(md_text("__x__"), md_text("~~x~~"), md_text("arc_easy"), md_text("a  b"), md_text(" a"))
    \_\_x\_\_ \~\~x\~\~ arc_easy a \x20b \x20a
    """
    return _spaces_shown(_LINE_CONTROL.sub(_escapes, _MD_SPECIAL.sub(r"\\\1", _BREAK_ESCAPE_LIKE.sub(r"\\\\", str(x)))))


def md_prose(text: str) -> str:
    """Report prose that already holds its own emphasis (``**``, ``*``) and code spans: the characters that start
    HTML, links, images and tables are escaped, line breaks become spaces; ``*`` and backticks are kept."""
    return control_text(_MD_PROSE.sub(r"\\\1", _ESCAPE_LIKE.sub(r"\\\\", _LINE_BREAKS.sub(" ", str(text)))))


def _formula(x: str) -> bool:
    return x[:1] in ("=", "+", "-", "@", "\t", "\r") and not _NUMBER.fullmatch(x)


def csv_cell(x: Any) -> Any:
    """A text cell that a spreadsheet would read as a formula (starting with ``=``, ``+``, ``-``, ``@``, a tab or
    a carriage return) with a ``'`` put before it, as OWASP's guidance on CSV injection says; numbers, and text
    that is a number (``-0.5``), are kept as they are. Text that already starts with quotes before such a formula
    (``'=x``) gets one more, so that it never reads as a quoted formula (``'=x`` is written ``''=x``, ``=x`` as
    ``'=x``). Control, format and other invisible characters and look-alike spaces (but tabs and line feeds) are
    shown as escapes (``\\x1b``, ``\\u200b``, ``\\u3164``, ``\\xa0``), as by :func:`terminal_text`; a
    carriage return alone as ``\\x0d`` (a CSV writer quotes a field holding a line feed, not one holding a lone
    carriage return, which readers then take for the end of the row).

    Examples
    --------
    >>> from effstats._escape import csv_cell
    >>> csv_cell("=HYPERLINK(\\"http://x\\")"), csv_cell("-0.5"), csv_cell(-0.5), csv_cell("org/model")
    ('\\'=HYPERLINK("http://x")', '-0.5', -0.5, 'org/model')
    >>> csv_cell("=x"), csv_cell("'=x"), csv_cell("'quoted"), csv_cell("a\\rb"), csv_cell("a\\r\\nb")
    ("'=x", "''=x", "'quoted", 'a\\\\x0db', 'a\\r\\nb')
    """
    if not isinstance(x, str):
        return x
    if _formula(x) or (x[:1] == "'" and _formula(x.lstrip("'"))):
        x = "'" + x
    x = _CSV_CONTROL.sub(_escapes, _ESCAPE_LIKE.sub(r"\\\\", x))
    return re.sub("\r(?!\n)", r"\\x0d", x)


def _safe_index(index: pd.Index, cell: Any = None) -> pd.Index:
    import pandas as pd

    cell = cell or csv_cell
    if isinstance(index, pd.MultiIndex):
        return pd.MultiIndex.from_tuples([tuple(cell(v) for v in t) for t in index], names=index.names)
    if index.dtype == object or pd.api.types.is_string_dtype(index.dtype):
        return index.map(cell)
    return index


def _map_text(df: pd.DataFrame, cell: Any) -> pd.DataFrame:
    import pandas as pd

    out = df.copy()
    for j in range(out.shape[1]):
        col = out.iloc[:, j]
        if col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
            out.isetitem(j, col.map(cell))
    out.index = _safe_index(out.index, cell)
    out.columns = _safe_index(out.columns, cell)
    return out


def csv_safe(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells, index labels and column names are :func:`csv_cell`-safe; numeric
    columns are untouched.

    Examples
    --------
    >>> import pandas as pd
    >>> from effstats._escape import csv_safe
    >>> print(csv_safe(pd.DataFrame({"model": ["=cmd|' /C calc'!A0", "b"], "score": [-0.25, 0.5]})).to_csv(index=False))
    model,score
    '=cmd|' /C calc'!A0,-0.25
    b,0.5
    <BLANKLINE>
    """
    return _map_text(df, csv_cell)


def html_safe(df: pd.DataFrame) -> pd.DataFrame:
    r"""A copy of ``df`` for :meth:`pandas.DataFrame.to_html` (which escapes markup, not control characters):
    control characters and bidirectional overrides in its text shown as escapes (:func:`terminal_text`).

    Examples
    --------
    >>> import pandas as pd
    >>> from effstats._escape import html_safe
    >>> print(html_safe(pd.DataFrame({"model": ["a\u202eb"]})).iloc[0, 0])
    a\u202eb
    """
    return _map_text(df, lambda x: _spaces_shown(line_text(x)) if isinstance(x, str) else x)


def md_to_html(md: str) -> str:
    """The body of an HTML page saying what a report's Markdown says: ``#`` headings, paragraphs, pipe tables,
    ``**bold**``, ``*italics*`` and code spans; backslash-escaped characters (:func:`md_text`) stay literal and
    every text is HTML-escaped, its escapes kept (its names are escaped already).

    Examples
    --------
    >>> from effstats._escape import md_text, md_to_html
    >>> print(md_to_html("# Estimate\\n\\nRank 1 is *the best*.\\n\\n| model | rank |\\n|---|---|\\n| "
    ...                  + md_text("<b>|x") + " | 1 |\\n"))
    <h1>Estimate</h1>
    <p>Rank 1 is <em>the best</em>.</p>
    <table><tr><th>model</th><th>rank</th></tr><tr><td>&lt;b&gt;|x</td><td>1</td></tr></table>
    """
    out: list[str] = []
    para: list[str] = []
    table: list[list[str]] = []

    def flush() -> None:
        if para:
            out.append(f"<p>{_md_inline(' '.join(para))}</p>")
            para.clear()
        if table:
            head, *rows = table
            out.append("<table><tr>" + "".join(f"<th>{_md_inline(c)}</th>" for c in head) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{_md_inline(c)}</td>" for c in r) + "</tr>" for r in rows)
                       + "</table>")
            table.clear()

    for line in md.splitlines():
        heading = re.match(r"^(#{1,6}) (.*)$", line)
        if heading:
            flush()
            n = len(heading[1])
            out.append(f"<h{n}>{_md_inline(heading[2])}</h{n}>")
        elif line.startswith("|"):
            if para:
                flush()
            if not re.fullmatch(r"\|(-+\|)+", line.strip()):
                table.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
        elif not line.strip():
            flush()
        else:
            if table:
                flush()
            para.append(line.strip())
    flush()
    return "\n".join(out)


def _md_inline(text: str) -> str:
    """One line of Markdown as HTML: escaped characters literal, then emphasis and code spans."""
    literal: list[str] = []

    def keep(m: re.Match) -> str:
        literal.append(m[1])
        return f"\ue000{len(literal) - 1}\ue001"  # private-use marks: the HTML escape keeps them

    # as CommonMark: a backslash escapes ASCII punctuation only (the "\\u202e" that shows a control stays)
    t = _html_escaped(re.sub(r"\\([!-/:-@\[-`{-~])", keep, text))
    for mark, tag in (("**", "strong"), ("*", "em"), ("`", "code")):
        parts = t.split(mark)
        if len(parts) % 2 == 1:
            t = "".join(p if i % 2 == 0 else f"<{tag}>{p}</{tag}>" for i, p in enumerate(parts))
    return re.sub("\ue000(\\d+)\ue001", lambda m: _html_escaped(literal[int(m[1])]), t)


def _html_escaped(text: str) -> str:
    """Markdown text whose names are escaped already (:func:`md_text`) as HTML text: its escapes kept as they are."""
    return html.escape(control_text(text), quote=True)
