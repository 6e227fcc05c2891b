"""argparse helpers of the ``topicdp`` command (pure Python: building the parser loads no numerical library)."""

from __future__ import annotations

import argparse
import os


class LazyParser(argparse.ArgumentParser):
    """A sub-command parser whose arguments are added on first use, by ``populate(parser)``.

    ``topicdp --help`` lists the sub-commands from their one-line help alone, so the modules that define
    the arguments of ``audit`` (dataclasses of the audit library, which imports numpy) load only when that
    sub-command is parsed or its own help is asked for.
    """

    def __init__(self, *args, populate=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._populate = populate

    def _ensure(self) -> None:
        if self._populate is not None:
            populate, self._populate = self._populate, None
            populate(self)

    def parse_known_args(self, args=None, namespace=None):
        self._ensure()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._ensure()
        return super().format_help()

    def format_usage(self) -> str:
        self._ensure()
        return super().format_usage()


def check_output_path(path: str | None, flag: str) -> None:
    """Refuse, before any work, an output path that cannot be a file (a directory, or in a missing directory)."""
    if path is not None and (os.path.isdir(path) or not os.path.isdir(os.path.dirname(os.path.abspath(path)))):
        raise ValueError(f"{flag}: cannot write a file at {path} (a directory, or its directory does not exist)")
