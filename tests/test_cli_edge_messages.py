"""Messages at the edges of the command line's ranges: each says where its bounds come from."""
from __future__ import annotations

import json
import shlex
import unicodedata

import numpy as np
import pandas as pd
import pytest

from effstats._escape import csv_cell, html_safe, html_text, md_text, md_to_html, terminal_text
from effstats._shared import _level_percent
from effstats.cli import main

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    """A long CSV of 8 reference models on 2 tasks of 30 items each, 0/1 scores."""
    root = tmp_path_factory.mktemp("edges")
    rng = np.random.default_rng(1)
    items = [f"t{t}/{i}" for t in range(2) for i in range(30)]
    rows = [(f"m{k}", it, float(rng.random() < 0.3 + 0.06 * k)) for k in range(8) for it in items]
    pd.DataFrame(rows, columns=["model", "item", "score"]).to_csv(root / "ref.csv", index=False)
    return root / "ref.csv"


def _one_error(argv, capsys) -> str:
    code = main([str(a) for a in argv])
    _, err = capsys.readouterr()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("initial, low", [(None, 60), (50, 50)])
def test_max_n_below_initial_says_initial_sets_the_minimum(ref, capsys, tmp_path, initial, low):
    argv = ["sequential", "start", ref, "--out", tmp_path / "s", "--half-width", "0.1", "--max-n", "40"]
    err = _one_error(argv + ([] if initial is None else ["--initial", initial]), capsys)
    assert f"--max-n: expected an integer in [{low}, 60], got 40" in err
    assert f"{'the default ' if initial is None else ''}--initial {low}, the first look's items" in err
    assert "at most the 60 eligible items" in err


@pytest.mark.parametrize("rule, against, initial", [("precision", None, None), ("precision", None, 5),
                                                    ("efficacy", "m2", None)])
def test_a_sequential_start_on_one_item_says_so_not_an_empty_range(tmp_path, capsys, rule, against, initial):
    rows = [("m0", "t/0", 1.0), ("m1", "t/0", 0.0), ("m2", "t/0", 1.0), ("m0", "t/1", 0.0), ("m1", "t/1", 1.0)]
    pd.DataFrame(rows[:3] if against is None else rows, columns=["model", "item", "score"]).to_csv(
        tmp_path / "ref.csv", index=False)
    argv = ["sequential", "start", tmp_path / "ref.csv", "--out", tmp_path / "s", "--rule", rule]
    argv += ["--against", against] if against else []
    err = _one_error(argv + ([] if initial is None else ["--initial", initial]), capsys)
    assert err == ("effstats sequential start: error: REFERENCE: a sequential run needs results on at least 2 items, "
                   "the first look's; the reference data has 1" + (" on which 'm2' has results" if against else ""))

def test_an_against_model_in_another_normalisation_is_named_as_such(tmp_path, capsys):
    """``--against`` decomposed (NFD) where the reference writes the model composed (NFC): the refusal says they
    differ only by Unicode normalisation, rather than that no reference model has the name it prints."""
    rows = [(m, f"t/{j}", float((j + k) % 3 == 0)) for k, m in enumerate(["m0", "m1", "caf\u00e9"]) for j in range(9)]
    pd.DataFrame(rows, columns=["model", "item", "score"]).to_csv(tmp_path / "ref.csv", index=False)
    nfd = unicodedata.normalize("NFD", "caf\u00e9")
    err = _one_error(["sequential", "start", tmp_path / "ref.csv", "--out", tmp_path / "s", "--rule", "efficacy",
                      "--against", nfd], capsys)
    assert err == (f"effstats sequential start: error: --against: no reference model '{nfd}' (written "
                   "'cafe\\u0301'); the reference model 'café' (written 'caf\\xe9') differs from it only by Unicode "
                   "normalisation: give that one")

@pytest.mark.parametrize("budget", [0, 61])
def test_select_budget_out_of_range_gives_one_range_with_its_reason(ref, capsys, tmp_path, budget):
    err = _one_error(["select", ref, "--budget", budget, "--out", tmp_path / "b"], capsys)
    assert err == (f"effstats select: error: --budget: expected an integer in [4, 60], got {budget} (at least 2 items "
                   "in each of the 2 tasks; at most the reference's 60 items)")


@pytest.fixture(scope="module")
def comma(tmp_path_factory, ref):
    """The reference with task t0 renamed 'a,b', and a selection of 10 items from it."""
    root = tmp_path_factory.mktemp("comma")
    d = pd.read_csv(ref)
    d.assign(item=d["item"].str.replace("t0/", "a,b/")).to_csv(root / "ref.csv", index=False)
    assert main(["select", str(root / "ref.csv"), "--budget", "10", "--out", str(root / "sel")]) == 0
    items = json.loads((root / "sel" / "manifest.json").read_text())["items"]
    return root, items


def test_a_task_name_with_a_comma_is_said_to_be_out_of_lm_evals_reach(comma, capsys):
    root, _ = comma
    assert main(["select", str(root / "ref.csv"), "--budget", "10", "--out", str(root / "sel2")]) == 0
    out = capsys.readouterr().out
    assert "lm_eval --model ... --tasks a,b,t1 " in out
    assert "note: lm_eval splits --tasks at commas and cannot take the task name 'a,b'" in out


def test_the_tasks_option_suggested_for_a_comma_name_is_escaped_and_works(comma, capsys, tmp_path):
    root, items = comma
    pd.DataFrame({"model": "new", "item": [i for i in items if i.startswith("a,b/")], "score": 1.0}).to_csv(
        tmp_path / "new.csv", index=False)
    err = _one_error(["estimate", root / "sel", tmp_path / "new.csv", "--out", tmp_path / "e"], capsys)
    assert "or score on the tasks present only with --tasks 'a\\,b' (the estimate" in err
    # the suggestion, as a shell reads it, is what --tasks takes
    assert main(["estimate", str(root / "sel"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "e2"),
                 "--tasks", shlex.split("'a\\,b'")[0]]) == 0
    assert "Scored on 1 of the manifest's 2 tasks only" in capsys.readouterr().out


def test_the_tasks_option_suggested_for_a_name_with_a_control_character_is_one_word_the_shell_reads_back(
        ref, capsys, tmp_path):
    import subprocess

    d = pd.read_csv(ref)
    d.assign(item=d["item"].str.replace("t0/", "a\x1bb/")).to_csv(tmp_path / "ref.csv", index=False)
    assert main(["select", str(tmp_path / "ref.csv"), "--budget", "10", "--out", str(tmp_path / "sel"),
                 "--no-progress"]) == 0
    items = json.loads((tmp_path / "sel" / "manifest.json").read_text())["items"]
    pd.DataFrame({"model": "new", "item": [i for i in items if i.startswith("a\x1bb/")], "score": 1.0}).to_csv(
        tmp_path / "new.csv", index=False)
    capsys.readouterr()
    err = _one_error(["estimate", tmp_path / "sel", tmp_path / "new.csv", "--out", tmp_path / "e"], capsys)
    word = err.split("or score on the tasks present only with --tasks ", 1)[1].split(" (the estimate", 1)[0]
    # as printed (the line escapes control characters) and pasted into a shell, the word is the task's name
    back = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, text=True, check=True).stdout
    assert back == "a\x1bb", (word, back)
    assert main(["estimate", str(tmp_path / "sel"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "e2"),
                 "--tasks", back]) == 0


@pytest.mark.parametrize("level, shown", [(0.95, "95"), (0.975, "97.5"), (0.999999999999, "99.9999999999"),
                                          (0.07, "7"), (1 - 1e-15, "99.999999999999901")])
def test_a_confidence_level_is_shown_with_its_digits_never_as_100(level, shown):
    assert _level_percent(level) == shown


def test_the_estimate_report_shows_a_level_close_to_1_as_it_is(ref, capsys, tmp_path):
    assert main(["select", str(ref), "--budget", "10", "--out", str(tmp_path / "s")]) == 0
    items = json.loads((tmp_path / "s" / "manifest.json").read_text())["items"]
    pd.DataFrame({"model": "new", "item": items, "score": np.arange(len(items)) % 2.0}).to_csv(
        tmp_path / "new.csv", index=False)
    capsys.readouterr()
    assert main(["estimate", str(tmp_path / "s"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "e"),
                 "--confidence", "0.999999999999"]) == 0
    out = capsys.readouterr().out
    assert "Intervals at 99.9999999999 %" in out and "100 %" not in out


def test_max_n_with_the_logistic_correction_starts_and_rounds_initial_with_a_warning(ref, capsys, tmp_path):
    code = main([str(a) for a in ["sequential", "start", ref, "--out", tmp_path / "s", "--half-width", "0.1",
                                  "--correction", "logistic", "--initial", "12", "--batch", "12", "--max-n", "40"]])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "the logistic correction draws equal numbers from its 5 strata" in err


@pytest.mark.parametrize("option, value", [("--scenarios", ",,"), ("--scenarios", "s1,,s2"), ("--exclude", "s1,")])
def test_audit_refuses_an_empty_column_name(capsys, tmp_path, option, value):
    rng = np.random.default_rng(0)
    pd.DataFrame(rng.random((6, 4)), columns=["s1", "s2", "s3", "s4"]).assign(
        model=[f"m{i}" for i in range(6)]).to_csv(tmp_path / "lb.csv", index=False)
    err = _one_error(["audit", tmp_path / "lb.csv", option, value, "--out", tmp_path / "a"], capsys)
    assert err == (f"effstats audit: error: {option}: expected comma-separated column names, got {value!r} "
                   "(an empty name)")
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("escape", ["\\u202e", "\\x1b", "\\u2066"])
def test_a_name_holding_the_text_of_an_escape_is_not_shown_as_the_control_it_names(escape):
    """A bidi override is written as its escape; a name holding that escape's text shows differently, in Markdown
    (its source and as rendered), HTML tables and CSV cells."""
    control = escape.encode("ascii").decode("unicode_escape")
    real, lookalike = f"a{control}b", f"a{escape}b"
    assert md_text(real) != md_text(lookalike)
    assert md_to_html(md_text(real)) != md_to_html(md_text(lookalike))
    assert csv_cell(real) != csv_cell(lookalike)
    frame = pd.DataFrame({"model": [real, lookalike]})
    cells = html_safe(frame)["model"].tolist()
    assert cells[0] != cells[1]
    # still inert: no raw control, and markup stays escaped
    for out in (md_text(real), csv_cell(real), cells[0], md_to_html(md_text("<b>" + real))):
        assert control not in out and "<b>" not in out
    assert md_to_html(md_text(real)) == f"<p>a{escape}b</p>"


@pytest.mark.parametrize("escape", ["\\u202e", "\\x1b", "\\u2066", "\\x85"])
def test_terminal_and_html_text_show_a_control_and_the_text_of_its_escape_apart(escape):
    """Both directions: a name holding the control shows its escape, a name holding the escape's text shows that
    text with its backslash doubled; plain names (and backslashes that start no escape) are unchanged."""
    control = escape.encode("ascii").decode("unicode_escape")
    assert terminal_text(f"a{control}b") == f"a{escape}b"
    assert terminal_text(f"a{escape}b") == f"a\\{escape}b"
    assert terminal_text(f"a\\{control}b") == f"a\\\\{escape}b"  # a backslash before the control: doubled too
    assert html_text(f"<{control}>") == f"&lt;{escape}&gt;" and html_text(f"<{escape}>") == f"&lt;\\{escape}&gt;"
    for plain in ("org/model-7b", "C:\\users\\me", "a\\b", "x\\u20", "arc_easy/17", "naïve 名前"):
        assert terminal_text(plain) == plain and html_text(plain) == plain


def test_terminal_and_html_text_never_show_two_names_alike():
    """Every name of up to five characters from backslashes, escape-shaped letters and controls: distinct names
    show distinctly, and no control is left in what is shown."""
    import itertools

    alphabet = ["\\", "x", "1", "b", "\x1b", "\u202e", "a"]
    names = ["".join(t) for n in range(6) for t in itertools.product(alphabet, repeat=n)]
    for show in (terminal_text, html_text):
        shown = [show(n) for n in names]
        assert len(set(shown)) == len(names)
        assert not any("\x1b" in t or "\u202e" in t for t in shown)


def test_no_two_names_show_alike_in_a_terminal_a_report_or_a_csv_cell():
    """Every name of up to four characters from backslashes, escape-shaped letters, line breaks, tabs, controls,
    format characters, a Hangul filler (drawn as nothing), a no-break space, spaces, underscores, quotes and formula
    signs: distinct names give distinct text in a terminal, an HTML or a Markdown cell (its source and as rendered)
    and a CSV cell; in the one-line forms no line break, tab, control, format or invisible character is left, and
    in HTML and Markdown no space that they collapse or trim (leading, trailing, or after another space)."""
    import itertools
    import re

    alphabet = ["\\", "x", "n", "t", "r", "\n", "\t", "\r", "\x1b", "\u202e", "\u200b", "\u3164", "\xa0", " ", "_",
                "'", "=", "a"]
    names = ["".join(t) for n in range(5) for t in itertools.product(alphabet, repeat=n)]
    raw = ("\n", "\t", "\r", "\x1b", "\u202e", "\u200b", "\u3164", "\xa0")
    for show in (terminal_text, html_text, md_text, csv_cell, lambda n: md_to_html(md_text(n))):
        shown = [show(n) for n in names]
        assert len(set(shown)) == len(names)
        if show is terminal_text:
            assert not any(c in t for t in shown for c in raw[2:])
        elif show is not csv_cell:
            assert not any(c in t for t in shown for c in raw)
        if show in (html_text, md_text):
            assert not any(re.search(r"^ | $|  ", t) for t in shown)
    for plain in ("a b", "org/model-7b", "C:\\users", "naïve 名前", "'quoted", "-0.5"):
        assert terminal_text(plain) == html_text(plain).replace("&#x27;", "'") == csv_cell(plain) == plain
        assert md_text(plain) == plain.replace("\\", "\\\\")  # Markdown's own escape of the backslash


@pytest.mark.parametrize("shown", [terminal_text, html_text, md_text, csv_cell])
def test_every_format_character_is_shown_as_an_escape(shown):
    """Unicode's format characters (category Cf: zero-width spaces and joiners, the byte-order mark, the soft
    hyphen, bidirectional marks) are invisible; each is shown as its escape."""
    import unicodedata

    # Unicode 15's Egyptian hieroglyph format controls, unassigned in the Unicode 14 of Python 3.11's unicodedata
    later = set(map(chr, range(0x13439, 0x13440)))
    for c in map(chr, range(0x110000)):
        if unicodedata.category(c) == "Cf" or c in later:
            assert shown(f"a{c}b") == "a" + c.encode("unicode_escape").decode("ascii") + "b", hex(ord(c))


# Unicode's default-ignorable code points outside category Cf (DerivedCoreProperties.txt, Unicode 15) and its
# spaces other than U+0020 (category Zs), with the blank Braille pattern: each drawn as nothing or as a space
_INVISIBLE = [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x180E), 0x180F, 0x2065, 0x3164,
              *range(0xFE00, 0xFE10), 0xFFA0, *range(0xFFF0, 0xFFF9), 0xE0000, *range(0xE0002, 0xE0020),
              *range(0xE0080, 0xE1000), 0x00A0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000, 0x2800]


@pytest.mark.parametrize("shown", [terminal_text, html_text, md_text, csv_cell])
def test_every_invisible_character_and_look_alike_space_is_shown_as_an_escape(shown):
    """Characters Unicode draws as nothing though not format characters (the combining grapheme joiner, Hangul
    fillers, variation selectors) and spaces other than U+0020 (no-break, figure, ideographic): "cd" and
    "c\u3164d", "a b" and "a\u3000b" look alike, so each is shown as its escape; so are all the Zs spaces."""
    import unicodedata

    zs = [c for c in range(0x110000) if unicodedata.category(chr(c)) == "Zs" and c != 0x20]
    assert set(zs) <= set(_INVISIBLE)
    for c in map(chr, _INVISIBLE):
        assert shown(f"a{c}b") == "a" + c.encode("unicode_escape").decode("ascii") + "b", hex(ord(c))


def test_markdown_and_html_show_emphasis_marks_and_collapsed_spaces_literally():
    """A name "__x__" or "~~x~~" is not bold or struck through in Markdown; "a  b", " a" and "a " do not show as
    "a b" and "a" in Markdown or HTML; names with an underscore inside a word stay as they are."""
    for name in ("__x__", "_x_", "~~x~~", "~x~", "x_", "a  b", " a", "a ", "  ", " "):
        for show in (md_text, lambda n: md_to_html(md_text(n)), html_text):
            out = show(name)
            assert "<strong>" not in out and "<em>" not in out
            assert not out.startswith(" ") and not out.endswith(" ") and "  " not in out
    assert md_text("__x__") == "\\_\\_x\\_\\_" and md_text("~~x~~") == "\\~\\~x\\~\\~"
    assert md_text("a  b") == html_text("a  b") == "a \\x20b" and md_to_html(md_text(" a ")) == "<p>\\x20a\\x20</p>"
    assert md_text("a\\x20b") == "a\\\\\\\\x20b" and html_text("a\\x20b") == "a\\\\x20b"  # the text of the escape
    for plain in ("arc_easy", "mmlu_pro_math", "a b", "org/model-7b"):
        assert md_text(plain) == html_text(plain) == md_to_html(md_text(plain))[3:-4] == plain


def test_audit_prints_each_warning_once_and_missing_glyphs_in_one_line(tmp_path, capsys):
    """matplotlib warns of every glyph its font lacks, once per figure: one line names the characters; the audit's
    own warnings are each printed once; names drawn as nothing are shown as escapes and so warn of no glyph."""
    import warnings

    from effstats.cli import _audit_warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            for g, name in ((21517, "CJK UNIFIED IDEOGRAPH-540D"), (12644, "HANGUL FILLER")):
                warnings.warn(f"Glyph {g} (\\N{{{name}}}) missing from current font.", UserWarning)
            warnings.warn("SCORES: a note\nits second line", UserWarning)
            warnings.warn("Glyph 12487 (\\N{KATAKANA LETTER DE}) missing from font(s) DejaVu Sans.", UserWarning)
    assert _audit_warnings(caught) == [
        "SCORES: a note", "the figures' font has no glyph for 3 character(s) of the names (U+540D, U+3164, U+30C7): "
        "they show as empty boxes in the figures; the report's tables show them"]
    names = ["ab", "a\u034fb", "cd", "c\u3164d", "a b", "a\u3000b", "__x__", "x"]
    rows = [f"{n},{0.9 - 0.05 * i:.3f},{0.8 - 0.04 * i + 0.01 * (i % 2):.3f},{0.7 - 0.03 * i:.3f}"
            for i, n in enumerate(names)]
    (tmp_path / "lb.csv").write_text("model,t1,t2,t3\n" + "\n".join(rows) + "\n", encoding="utf-8")
    assert main([str(a) for a in ["audit", tmp_path / "lb.csv", "--out", tmp_path / "a", "--n-boot", "20",
                                  "--no-progress"]]) == 0
    err = capsys.readouterr().err
    assert "Glyph" not in err and "glyph" not in err, err
    md = (tmp_path / "a" / "report.md").read_text(encoding="utf-8")
    for n in ("a\\u034fb", "c\\u3164d", "a\\u3000b", "\\_\\_x\\_\\_"):
        assert f"| {n} |" in md


def test_select_lists_a_task_named_by_an_escapes_text_apart_from_one_holding_the_control(tmp_path, capsys):
    from effstats import ResponseMatrix
    from effstats.datasets import simulate_responses

    tasks = ["rtl\u202eevil", "rtl\\u202eevil"]
    d = simulate_responses(12, 60, rng=3)
    rm = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(12)],
                        item_ids=[f"{tasks[k % 2]}/{k}" for k in range(60)])
    rm.to_long().to_csv(tmp_path / "ref.csv", index=False)
    assert main(["select", str(tmp_path / "ref.csv"), "--budget", "20", "--out", str(tmp_path / "sel")]) == 0
    rows = [ln.split()[0] for ln in capsys.readouterr().out.splitlines() if ln.startswith("rtl")]
    assert sorted(rows) == ["rtl\\\\u202eevil", "rtl\\u202eevil"]


def test_an_empty_helm_run_folder_is_named_in_a_warning(tmp_path):
    from helm_fixtures import Scenario, write_suite

    from effstats.datasets import read_helm_runs

    write_suite(tmp_path, [Scenario("boolq", n=6)], 3)
    runs = tmp_path / "runs" / "v1"
    (runs / "boolq:model=partial").mkdir()
    (runs / "groups").mkdir()  # not a run: HELM's summaries sit beside the runs
    with pytest.warns(UserWarning, match=r"^path_or_paths: 1 run folder\(s\) without per_instance_stats\.json left out "
                      r"\(an empty or interrupted run\): 'boolq:model=partial'$"):
        rm = read_helm_runs(runs)
    assert rm.n_models == 3


@pytest.mark.parametrize("inside", [False, True])
def test_out_in_the_reference_or_new_results_folder_is_warned(tmp_path, capsys, inside):
    from helm_fixtures import Scenario, write_suite

    write_suite(tmp_path / "ref", [Scenario("boolq", n=20), Scenario("mmlu:subject=a", n=20)], 6)
    ref = tmp_path / "ref" / "runs" / "v1"
    out = ref / "sel" if inside else ref
    assert main(["select", str(ref), "--budget", "10", "--out", str(out), "--force"]) == 0
    err = capsys.readouterr().err
    assert (f"warning: --out: {out} {'is inside' if inside else 'is'} the REFERENCE folder {ref}: the output files "
            "lie among the input files") in err
    assert main(["select", str(ref), "--budget", "10", "--out", str(tmp_path / "apart")]) == 0
    assert "--out:" not in capsys.readouterr().err


def test_terminal_text_stream_outlives_the_stream_it_writes_to():
    """The command line's escaping stream is flushed by its finaliser after the stream it writes to (a caller's,
    pytest's capture) was closed: no "Exception ignored ... I/O operation on closed file" at exit."""
    import io

    from effstats.workflow._cli import _TerminalText

    inner = io.StringIO()
    out = _TerminalText(inner)
    out.write("a\u202eb\n")
    assert inner.getvalue() == "a\\u202eb\n"
    inner.close()
    out.flush()
    out.close()
    assert out.closed


def test_an_out_folder_name_too_long_names_the_option(ref, capsys, tmp_path):
    long = tmp_path / ("x" * 300)
    line = _one_error(["select", ref, "--budget", 10, "--method", "random", "--out", long, "--no-progress"], capsys)
    assert line.startswith("effstats select: error: --out: cannot write to ") and "File name too long" in line, line
    wide = tmp_path / "wide.csv"
    x = np.random.default_rng(2).random((8, 4)).round(3)
    pd.DataFrame(x, index=pd.Index([f"m{k}" for k in range(8)], name="model"),
                 columns=[f"s{j}" for j in range(4)]).to_csv(wide)
    line = _one_error(["audit", wide, "--n-boot", 20, "--out", long, "--no-progress"], capsys)
    assert line.startswith("effstats audit: error: --out: cannot write to ") and "File name too long" in line, line


def test_the_printed_lm_eval_command_names_an_out_folder_with_control_characters_as_the_shell_reads_it(
        ref, capsys, tmp_path):
    import subprocess

    out = tmp_path / "ab\x1b[31mc\nd"
    code = main(["select", str(ref), "--budget", "10", "--method", "random", "--out", str(out), "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0
    line = next(ln for ln in printed.splitlines() if ln.strip().startswith("lm_eval "))
    word = line.split(" --samples ", 1)[1].split(" --log_samples", 1)[0]
    assert word.startswith("$'"), word
    back = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, text=True, check=True).stdout
    assert back == str(out / "lm_eval_samples.json") and (out / "lm_eval_samples.json").is_file()


@pytest.mark.parametrize("ids", ["t0/7", "img_7.png"])  # items that parse as lm-eval documents, and items that do not
def test_a_table_reference_names_the_item_ids_and_the_table_its_results_go_in(ref, capsys, tmp_path, ids):
    table = tmp_path / "ref.csv"
    d = pd.read_csv(ref)
    d.assign(item=d["item"] if "/" in ids else d["item"].str.replace("/", "_") + ".png").to_csv(table, index=False)
    for argv, files, then in ((["select", table, "--budget", "10", "--out", tmp_path / "sel"],
                               f'{tmp_path / "sel" / "manifest.json"} ("items")',
                               f"effstats estimate {tmp_path / 'sel'}"),
                              (["sequential", "start", table, "--half-width", "0.2", "--out", tmp_path / "s"],
                               str(tmp_path / "s" / "batch_001" / "items.json"),
                               f"effstats sequential update {tmp_path / 's'}")):
        assert main([str(a) for a in argv]) == 0
        out = capsys.readouterr().out.splitlines()
        step = out.index(f"the chosen item ids: {files}" + ("" if argv[0] == "select" else
                                                            f" ({files.replace('.json', '.csv')}: the same, for a "
                                                            "spreadsheet)"))
        assert out[step + 1].startswith("run the new model on them and pass its results as a table (columns model, "
                                        "item, score")
        assert out[step + 2] == f"  {then} <RESULTS.csv>"
        # lm_eval only as the way for documents of lm-eval tasks, after the table's command
        assert out[step + 3:step + 4] == (["if they are documents of lm-eval tasks, lm_eval runs them (then pass its "
                                           "<OUT> folder instead):"] if "/" in ids else [])
        assert not any("an lm-eval with --samples" in line for line in out)


def test_an_lm_eval_reference_names_the_lm_eval_command(tmp_path, capsys):
    from effstats.datasets import simulate_responses
    from effstats.workflow import write_lm_eval_samples
    from effstats import ResponseMatrix

    d = simulate_responses(6, 40, rng=0)
    rm = ResponseMatrix(d.values, model_ids=[f"org/m{i}" for i in range(6)],
                        item_ids=[f"{t}/{k}" for t in ("arc", "hs") for k in range(20)])
    write_lm_eval_samples(rm, tmp_path / "logs")
    assert main(["select", str(tmp_path / "logs"), "--budget", "10", "--out", str(tmp_path / "sel")]) == 0
    out = capsys.readouterr().out
    assert "run the new model on them (an lm-eval with --samples):\n  lm_eval --model ... --tasks arc,hs " in out
    assert "the chosen item ids" not in out and "<RESULTS.csv>" not in out
