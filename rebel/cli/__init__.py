"""The ``rebel`` command line: :mod:`rebel.cli.main` dispatches to one module per subcommand
(``train``, ``solve``, ``eval``, ``score``, ``play``, ``pretrained``, ``games``), which share
:mod:`rebel.cli.common` (parser class, exit codes, game and net arguments)."""
from rebel.cli.main import COMMAND_MODULES, build_parser, main

__all__ = ["COMMAND_MODULES", "build_parser", "main"]
