"""SCORES files read from disk: the path checked, a JSON score file's content (compressed or not), and a CSV/TSV
table read as text cells (its encoding judged by its bytes, its delimiter sniffed, its header read), refusing what
would be misread without a word (a Markdown table, a title line above the header, a NUL byte, a cut row).

The readers of :mod:`effstats.datasets._scores` and :mod:`effstats.datasets._score_json` judge the cells.
"""
from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
import re
from pathlib import Path
from typing import Any

import pandas as pd

from .._shared import RepeatedKeyError, _plain
from .._user_files import json_loads, refuse_empty_path, refuse_url, repeated_key_said
from ._cells import plain_cells
from ._delimited import (_compression, _refuse_nul, excel_sep_hint, refuse_json_lines, refuse_short_rows,
                         refuse_workbook)
from ._files import _compression_of


def _check_path(path: Any, *, directory_ok: bool = False) -> Path:
    """SCORES must be an existing file (or folder when ``directory_ok``) given as a str / Path."""
    if not isinstance(path, (str, Path)):
        raise ValueError(f"SCORES: expected a file path, got {type(path).__name__}")
    refuse_empty_path(path, "SCORES", "a file path")
    p = Path(path)
    if not p.exists():
        refuse_url(path, "SCORES")
        raise ValueError(f"SCORES: file {str(p)!r} does not exist")
    if p.is_dir() and not directory_ok:
        raise ValueError(f"SCORES: {str(p)!r} is a directory; give a file")
    if not (p.is_dir() or p.is_file()):  # reading a FIFO would wait forever
        raise ValueError(f"SCORES: {str(p)!r} is not a regular file (a FIFO or a device); give the file itself")
    return p


# what a compressed JSON score file may decompress to: JSON text compresses some 5-20 times; a file of a few
# megabytes that decompresses to gigabytes (a bomb) is refused once past the bound, not read into memory
JSON_RATIO = 200
JSON_FLOOR = 64 * 2**20  # bytes: below this, any ratio


def _read_json(p: Path) -> Any:
    """A JSON score file's content: compressed (gzip, bzip2, xz: by its first bytes, whatever its name) or not, with
    or without a UTF-8 byte order mark, as the table reader takes a table; anything else refused in one line naming
    the file."""
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ValueError(f"SCORES: {str(p)!r} cannot be read ({exc.strerror or type(exc).__name__})") from None
    opener = {"gzip": gzip, "bz2": bz2, "xz": lzma}.get(_compression_of(raw[:10]) or "")
    if opener is not None:
        limit = max(JSON_FLOOR, JSON_RATIO * len(raw))
        try:
            with opener.open(io.BytesIO(raw)) as fh:
                raw = fh.read(limit + 1)
        except (OSError, EOFError, ValueError, lzma.LZMAError) as exc:
            raise ValueError(f"SCORES: {str(p)!r} is a {opener.__name__} file that cannot be decompressed "
                             f"({type(exc).__name__}: truncated or damaged?)") from None
        if len(raw) > limit:
            raise ValueError(f"SCORES: {str(p)!r} decompresses to more than {limit:,} bytes ({JSON_RATIO} times its "
                             "size): not a score file (a damaged or hostile file?)")
    try:
        return json_loads(raw.decode("utf-8-sig"))
    except RepeatedKeyError as exc:  # JSON readers keep the last value without a word
        raise ValueError(f"SCORES: {str(p)!r} {repeated_key_said(exc)}") from None
    except RecursionError:
        raise ValueError(f"SCORES: {str(p)!r} is nested too deeply to read as JSON (a score file is a list of "
                         "tables or an object of results)") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"SCORES: {str(p)!r} is not valid UTF-8 JSON ({type(exc).__name__})") from None


# byte order marks, longest first (UTF-32's little-endian mark begins with UTF-16's)
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xef\xbb\xbf", "utf-8-sig"),
         (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def _encoding(path: Path) -> str:
    """The text encoding of a table, judged by its bytes: the one its byte order mark names (UTF-8; UTF-16 as
    Excel's "Unicode text" writes it; UTF-32), UTF-16 without one (every other byte of its text 0), else UTF-8. A
    file that is none of them (Latin-1, Windows-1252) is refused, naming the first byte that is not UTF-8 and what
    its line reads as Windows-1252: a guessed encoding would misread names silently. A compressed file is left to
    pandas, which decompresses it by its name."""
    with open(path, "rb") as f:
        head = f.read(4096)
    if head.startswith(b"PK\x03\x04"):
        refuse_workbook(path, "SCORES")
    if head.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"PK\x03\x04", b"\x28\xb5\x2f\xfd")):
        return "utf-8-sig"
    enc = next((e for bom, e in _BOMS if head.startswith(bom)), None)
    if enc:
        return enc
    pairs = len(head) // 2
    if pairs >= 2 and b"\0" in head:
        even, odd = head[0:2 * pairs:2].count(0), head[1:2 * pairs:2].count(0)
        if odd >= pairs / 2 and even == 0:
            return "utf-16-le"
        if even >= pairs / 2 and odd == 0:
            return "utf-16-be"
    raw = path.read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        n = raw.count(b"\n", 0, exc.start)
        line = raw.split(b"\n")[n].rstrip(b"\r").decode("cp1252", errors="replace")
        line = line if len(line) <= 60 else line[:57] + "..."
        raise ValueError(f"SCORES: {str(path)!r} is not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {n + 1}, "
                         f"which reads {line!r} as Windows-1252 / Latin-1); save it as UTF-8 (Excel: CSV UTF-8) "
                         "or as UTF-16 text") from None
    return "utf-8-sig"


def _text_file(path: Path, encoding: str, errors: str = "strict") -> Any:
    """A table opened as text, decompressed where it is compressed (gzip, bzip2, xz: by its first bytes, whatever
    its name), for the looks at its first lines that come before pandas reads it."""
    with open(path, "rb") as f:
        found = _compression_of(f.read(10))
    opener = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}.get(found or "")
    if opener is not None:
        return opener(path, "rt", encoding=encoding, errors=errors, newline="")
    return open(path, encoding=encoding, errors=errors, newline="")


def _sniff(path: Path, encoding: str = "utf-8-sig", skip: int = 0) -> str:
    """The delimiter of a CSV/TSV file: tab for .tsv / .tab (compressed: ``.tsv.gz``), else sniffed among ","
    "\\t" ";" from its first lines (after ``skip`` lines)."""
    if any(s.lower() in (".tsv", ".tab") for s in path.suffixes[-2:]):
        return "\t"
    with _text_file(path, encoding, "replace") as f:
        sample = "".join([f.readline() for _ in range(20 + skip)][skip:])
    try:
        return csv.Sniffer().sniff(sample, delimiters=",\t;").delimiter
    except csv.Error:
        first = sample.splitlines()[0] if sample else ""
        # one-column guesses fail the sniffer: the most frequent candidate in the header decides
        counts = {d: first.count(d) for d in (",", "\t", ";")}
        return max(counts, key=counts.get) if any(counts.values()) else ","


def _header(path: Path, sep: str, encoding: str = "utf-8-sig", skip: int = 0) -> list[str]:
    with _text_file(path, encoding) as f:
        first = [f.readline() for _ in range(skip + 1)][-1]
    return next(csv.reader(io.StringIO(first), delimiter=sep), [])


def _drop_empty_trailing(df: pd.DataFrame, head: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """The table without the columns a spreadsheet leaves at the end of each line (``,,``): unnamed, and empty in
    every row (they hold nothing; kept, they would be columns with the same empty name)."""
    n = 0
    while n < min(len(head), df.shape[1]) - 1 and not str(head[-1 - n]).strip() and df.iloc[:, -1 - n].isna().all():
        n += 1
    return (df.iloc[:, :df.shape[1] - n], head[:len(head) - n]) if n else (df, head)


def _refuse_markdown(path: Path, encoding: str) -> None:
    """Raise where the file is a Markdown table (a README's leaderboard): '|' separated, a '---' rule on line 2."""
    if _compression(path) is not None:
        return
    with open(path, encoding=encoding, errors="replace", newline="") as f:
        first, second = f.readline().strip(), f.readline().strip()
    if first.startswith("|") and re.fullmatch(r"\|?(\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*\|?", second):
        raise ValueError(f"SCORES: {path.name} is a Markdown table ('|' separated, a '---' rule on line 2), not "
                         "CSV/TSV; save it as CSV without the rule line (a spreadsheet reads it with '|' as the "
                         "delimiter)")


def _refuse_title_line(path: Path, encoding: str, sep: str, skip: int, error: str) -> None:
    """Raise naming a title line above the header (one text field, the rest of the line empty) where pandas' parser
    stopped at a later line holding more fields than the first."""
    m = re.search(r"Expected (\d+) fields? in line (\d+), saw (\d+)", error)
    if not m:
        return
    with open(path, encoding=encoding, errors="replace", newline="") as f:
        first = [f.readline() for _ in range(skip + 1)][-1]
    fields = [x for x in next(csv.reader(io.StringIO(first), delimiter=sep), []) if x.strip()]
    if len(fields) == 1 and int(m.group(3)) > 2:
        raise ValueError(f"SCORES: {path.name}: line {skip + 1} ({_plain(fields[0])!r}) has 1 field and line "
                         f"{int(m.group(2)) + skip} has {m.group(3)}: a title line above the header? delete it (and "
                         "any blank line after it)")


# an lm-eval document id, "<task>/<doc_id>", as the loop reads an item's task from it
_DOCUMENT = re.compile(r"(.+)/\d+")


def per_example_columns(names: Any) -> str:
    """The refusal of a wide score table whose score columns ``names`` are all named as examples of a few tasks
    (``<task>/<doc>``, two or more a task, twenty or more columns): per-example results that a models × scenarios
    audit would read one scenario a column. "" for other names."""
    names = [str(n) for n in names]
    found = [_DOCUMENT.fullmatch(n) for n in names]
    tasks = {m.group(1) for m in found if m}
    if len(names) < 20 or not all(found) or 2 * len(tasks) > len(names):
        return ""
    return (f"SCORES: its {len(names)} score columns are named as examples of {len(tasks)} "
            f"task{'s' if len(tasks) > 1 else ''}, <task>/<doc> (e.g. {_plain(names[0])!r}): a wide table is audited "
            "as models × scenarios, each column a scenario; give per-example results as a long table with the columns "
            "model, scenario, item and score (a row per model and example), or name the columns to audit as scenarios "
            "with --scenarios")


def _read_text_table(path: Path, header_check: Any = None) -> tuple[pd.DataFrame, str, list[str]]:
    """A CSV/TSV file as text cells (empty = missing), its separator and header, refusing what pandas would misread
    without a word: a NUL byte (pandas ends the field there) and a row with fewer fields than the header (a cut line,
    whose missing fields would read as not evaluated). The cells come out plain (:func:`._cells.plain_cells`: decimal
    commas, thousands separators, typographic minus signs, not-evaluated markers as '-')."""
    encoding = _encoding(path)
    _refuse_markdown(path, encoding)
    refuse_json_lines(path, _compression(path), "SCORES", "; SCORES is a table, a HELM groups JSON or an Open LLM "
                      "/ lm-eval results JSON (or a folder of them)")
    hint = excel_sep_hint(path, encoding) if _compression(path) is None else None
    skip = 1 if hint else 0  # Excel's "sep=;" line names the delimiter: not the header
    try:
        sep = hint or _sniff(path, encoding, skip)
        head = _header(path, sep, encoding, skip)
    except Exception as exc:  # pandas' parser errors vary by version
        raise ValueError(f"SCORES: could not parse {str(path)!r} as CSV/TSV ({str(exc).strip()})") from None
    if header_check is not None:  # before the cells are read, which takes long for thousands of columns
        header_check(head)
    if not encoding.startswith(("utf-16", "utf-32")):  # pandas' parser would end a field at a NUL, silently
        _refuse_nul(path, sep, _compression(path), name="SCORES")
    try:
        df = pd.read_csv(path, sep=sep, engine="python", dtype=str, keep_default_na=False, na_values=[""],
                         encoding=encoding, skiprows=skip, compression=_compression(path))
    except Exception as exc:  # pandas' parser errors vary by version
        _refuse_title_line(path, encoding, sep, skip, str(exc))
        raise ValueError(f"SCORES: could not parse {str(path)!r} as CSV/TSV ({str(exc).strip()})") from None
    if df.shape[1] and df.iloc[:, -1].isna().any() and not encoding.startswith(("utf-16", "utf-32")):
        refuse_short_rows(path, sep, head, _compression(path), name="SCORES")
    return plain_cells(df, sep), sep, head
