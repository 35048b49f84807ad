"""Every option and argument of every ``joinery`` sub-command says what it is in ``--help``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from worker.cli.command import COMMANDS, build_parser


def undocumented(parser: argparse.ArgumentParser, path: str) -> Iterator[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from undocumented(sub, f"{path} {name}")
        elif isinstance(action, argparse._HelpAction):
            continue
        elif not (action.help and action.help.strip()) or action.help == argparse.SUPPRESS:
            yield f"{path} {'/'.join(action.option_strings) or action.dest}"


def test_every_option_has_help_text() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subparsers.choices) >= set(COMMANDS), "the walk must see every sub-command"
    missing = sorted(undocumented(parser, "joinery"))
    assert not missing, "options without --help text:\n" + "\n".join(missing)


def test_the_walk_finds_an_option_without_help() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documented", help="says what it is")
    parser.add_argument("--bare")
    assert list(undocumented(parser, "x")) == ["x --bare"]
