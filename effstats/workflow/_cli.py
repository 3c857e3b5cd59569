"""``effstats select``, ``effstats estimate`` and ``effstats sequential start|update``."""
from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the workflow subcommands on the ``effstats`` parser."""


def run(args: argparse.Namespace) -> int:
    """Run a workflow subcommand; exit status 2 with one line for bad input."""
    raise NotImplementedError(args.command)
