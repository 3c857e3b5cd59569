"""The documentation's command-line reference (docs/cli_page.py, written by conf.py at every build): every command,
subcommand and argument of the ``effstats`` parsers is on the page with its help and default, and the page is
reST that docutils reads without a warning (the site builds with -W)."""
from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import pytest

from effstats.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


def _page_module():
    spec = importlib.util.spec_from_file_location("cli_page", ROOT / "docs" / "cli_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parsers(parser: argparse.ArgumentParser, name: str = "effstats"):
    """(command, parser) for the parser and every subcommand under it, walked independently of the page's code."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


PARSERS = list(_parsers(build_parser()))


def _section(page: str, command: str) -> str:
    """The page's text from the command's heading to the next heading."""
    lines = page.splitlines()
    start = lines.index(f"``{command}``")
    end = next((i - 1 for i in range(start + 2, len(lines))
                if re.fullmatch(r"[-~^]{4,}", lines[i]) and lines[i - 1].startswith("``effstats")), len(lines))
    return "\n".join(lines[start:end])


@pytest.fixture(scope="module")
def page():
    return _page_module().cli_rst()


def test_the_walk_finds_every_command():
    names = [name for name, _ in PARSERS]
    for command in ["effstats audit", "effstats select", "effstats estimate", "effstats sequential start",
                    "effstats sequential update", "effstats sequential status"]:
        assert command in names


@pytest.mark.parametrize("command,parser", PARSERS[1:], ids=[name for name, _ in PARSERS[1:]])
def test_every_argument_of_every_command_is_on_the_page(page, command, parser):
    text = _section(page, command)
    assert parser.format_usage().splitlines()[0] in text
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        names = action.option_strings or [action.metavar or action.dest]
        entry = next((line for line in text.splitlines() if line.startswith(f"``{names[0]}")), None)
        assert entry is not None, f"{command}: {names[0]} is not on the page"
        body = text.splitlines()[text.splitlines().index(entry) + 1]
        first_words = " ".join((action.help or "").split()[:3])
        assert re.sub(r"\\(.)", r"\1", body).strip().startswith(first_words), (command, names[0], body)
        shown_default = action.default not in (None, False) and action.nargs != 0 and not action.required
        if shown_default and "default" not in (action.help or "").lower():
            assert f"Default: ``{action.default}``" in body, (command, names[0], body)


def test_the_page_is_clean_rest_and_in_the_site(page):
    import docutils.core
    from docutils import nodes
    from docutils.parsers.rst import roles

    roles.register_generic_role("doc", nodes.emphasis)  # Sphinx's role; plain docutils reads the page here
    doctree = docutils.core.publish_doctree(page, settings_overrides={"report_level": 2, "halt_level": 2})
    titles = [t.astext() for t in doctree.findall(nodes.title)]
    assert titles[:3] == ["Command-line reference", "effstats audit", "effstats select"]
    # the help texts' characters that reST would read as markup are shown as they are
    assert "samples_*.jsonl" in doctree.astext()
    index = (ROOT / "docs" / "index.rst").read_text()
    assert "   generated/cli\n" in index
    assert "_write_cli_page" in (ROOT / "docs" / "conf.py").read_text()
