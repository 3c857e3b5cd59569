"""The command-line reference page, written from the ``effstats`` command's own parsers at every build (conf.py
writes it to ``generated/cli.rst``), so that it lists exactly the commands and options ``effstats --help`` shows.

Each command gets its usage line, its description and one entry per argument: the argument as written on the
command line, its help, its choices and its default.
"""
from __future__ import annotations

import argparse
import re

from effstats.cli import build_parser

TITLE = "Command-line reference"


def _escape(text: str) -> str:
    """``text`` as reST that shows it as it is (help texts hold ``*``, ``_`` and backslashes)."""
    return re.sub(r"([\\`*_|<>\[\]])", r"\\\1", " ".join(text.split()))


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """The parser's subcommands in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices.items())
    return []


def _entry(action: argparse.Action, formatter: argparse.HelpFormatter) -> list[str]:
    # the argument as --help writes it: --budget BUDGET, --force, REFERENCE
    lines = [f"``{formatter._format_action_invocation(action)}``"]
    text = _escape(action.help or "")
    text += "." if text and not text.endswith(".") else ""
    notes = []
    if action.required and action.option_strings:
        notes.append("Required.")
    if action.choices is not None and action.metavar is not None:
        notes.append("Choices: " + ", ".join(f"``{c}``" for c in action.choices) + ".")
    is_flag = action.nargs == 0
    if action.option_strings and not is_flag and not action.required and "default" not in text.lower():
        notes.append("Default: " + ("none" if action.default is None else f"``{action.default}``") + ".")
    body = " ".join(part for part in [text] + notes if part)
    lines.append(f"   {body}")
    return lines + [""]


def _command(name: str, parser: argparse.ArgumentParser, level: str) -> list[str]:
    formatter = parser._get_formatter()
    usage = parser.format_usage().strip()
    lines = [f"``{name}``", level * (len(name) + 4), ""]
    if parser.description:
        lines += [_escape(parser.description), ""]
    lines += [".. code-block:: text", "", *("   " + u for u in usage.splitlines()), ""]
    subs = _subcommands(parser)
    actions = [a for a in parser._actions
               if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
    for action in actions:
        lines += _entry(action, formatter)
    for sub_name, sub in subs:
        lines += _command(f"{name} {sub_name}", sub, "~" if level == "-" else "^")
    return lines


def cli_rst() -> str:
    """The page's reST: every ``effstats`` command, subcommand and argument."""
    parser = build_parser()
    lines = [TITLE, "=" * len(TITLE), "",
             "Every command and option of ``effstats``, written from the command's own parsers when the site is "
             "built (``effstats COMMAND --help`` prints the same). Every failure prints one line naming the argument "
             "on stderr and exits with status 2. A Ctrl-C, also while the command's modules load, prints one line "
             "(``effstats select: interrupted; files already written are complete, nothing half-written``) and exits "
             "with status 130; one in the first tenth of a second or so, while Python itself starts and before the "
             "command's code runs, ends as Python ends it: its own short traceback, or, landing in its import "
             "machinery, reported as ``Exception ignored`` and the command run to its end. The files the commands "
             "write and their columns are described in "
             ":doc:`../guide/reports`.", ""]
    for action in parser._actions:
        if action.option_strings and not isinstance(action, argparse._HelpAction):
            lines += _entry(action, parser._get_formatter())
    for name, sub in _subcommands(parser):
        lines += _command(f"effstats {name}", sub, "-")
    return "\n".join(lines) + "\n"
