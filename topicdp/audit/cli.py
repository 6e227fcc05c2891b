"""``topicdp audit``: argparse at the edge of the audit library.

Flags, defaults and help come from the fields of :class:`~topicdp.audit.setups.SetupOptions` (what to audit,
``--setup`` among :data:`~topicdp.audit.setups.SETUPS`) and :class:`~topicdp.audit.AuditOptions` (how), so each
default is stated once; this module adds only ``--plot``, ``--out`` and ``--fail-on-flag``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Callable

from .._extras import MissingExtraError, require
from .._files import add_overwrite_argument, atomic_path, atomic_write, check_file_flags, run_interruptible, wrote
from .plot import plot_tradeoff
from .runner import AuditOptions, AuditSetup, run_audit
from .setups import SETUPS, SetupOptions

DEFAULT_SETUP = "synthetic-gaussian"
DESCRIPTION = "Empirically lower-bound the epsilon of a mechanism on a canary."


def _add_fields(parser: argparse.ArgumentParser, cls, seen: dict) -> None:
    """One flag per dataclass field (type and default from the field, help from its metadata); a name shared by
    two option classes is one flag, its defaults equal."""
    groups: dict[str, argparse._ArgumentGroup] = {}
    for f in dataclasses.fields(cls):
        if f.name in seen:
            if seen[f.name] != f.default:
                raise RuntimeError(f"{f.name} has two defaults: {seen[f.name]!r} and {f.default!r}")
            continue
        seen[f.name] = f.default
        meta = f.metadata
        target: argparse._ActionsContainer = parser
        if "group" in meta:
            if meta["group"] not in groups:
                groups[meta["group"]] = parser.add_argument_group(meta["group"])
            target = groups[meta["group"]]
        flags = meta.get("flags") or ("--" + f.name.replace("_", "-"),)
        kind = meta.get("type", type(f.default))
        target.add_argument(*flags, dest=f.name, type=kind, default=f.default, choices=meta.get("choices"),
                            help=f"{meta.get('help', '')} (default: {f.default})")
        if meta.get("hidden_flags"):  # old spellings, still accepted, not shown
            target.add_argument(*meta["hidden_flags"], dest=f.name, type=kind, default=argparse.SUPPRESS,
                                choices=meta.get("choices"), help=argparse.SUPPRESS)


def _from_namespace(cls, args: argparse.Namespace):
    return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)})


def add_audit_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the audit options to ``parser``."""
    parser.add_argument("--setup", "--mechanism", dest="mechanism", default=DEFAULT_SETUP, choices=sorted(SETUPS),
                        help=f"what to audit (default: {DEFAULT_SETUP})")
    seen: dict = {}
    _add_fields(parser, AuditOptions, seen)
    _add_fields(parser, SetupOptions, seen)
    parser.add_argument("--plot", default=None, metavar="PATH", help="save the trade-off plot here")
    parser.add_argument("--out", default=None, metavar="JSON", help="write the audit result here")
    parser.add_argument("--fail-on-flag", action="store_true", help="exit with status 1 if the claim is refuted")
    add_overwrite_argument(parser)


def populate(parser: argparse.ArgumentParser) -> None:
    """The ``audit`` sub-command's description, arguments and functions (``topicdp.cli`` calls it when audit is
    used)."""
    parser.description = DESCRIPTION
    add_audit_arguments(parser)
    parser.set_defaults(func=run_audit_cli, check=check_arguments)


def check_arguments(args: argparse.Namespace) -> None:
    """Before any work: the output files (apart from the corpus and each other; an existing one only with
    ``--overwrite``) and what they need (the options themselves validate on construction)."""
    check_file_flags(args, ("--out", "--plot"), ("--corpus",))
    if getattr(args, "plot", None) is not None:
        require("matplotlib", extra="plots", purpose="--plot")


def options_from_args(args: argparse.Namespace) -> tuple[SetupOptions, AuditOptions]:
    """The typed options of parsed flags (validated: a bad value raises ``ValueError`` naming the option)."""
    return _from_namespace(SetupOptions, args), _from_namespace(AuditOptions, args)


def run_audit_cli(args: argparse.Namespace, setup_factory: Callable[[SetupOptions], AuditSetup] | None = None) -> int:
    """Entry point of ``topicdp audit``: build the setup, audit, print, save the plot and JSON."""
    setup_options, audit_options = options_from_args(args)
    factory = setup_factory or SETUPS[getattr(args, "mechanism", DEFAULT_SETUP)]
    result = run_audit(factory(setup_options), audit_options)
    print(result.summary())
    if args.plot:  # atomically, as every file topicdp writes
        with atomic_path(args.plot, overwrite=args.overwrite) as tmp:
            plot_tradeoff(result, tmp)
        wrote(args, "--plot", f"trade-off plot   {args.plot}")
    if args.out:
        atomic_write(args.out, json.dumps(result.to_dict(), indent=2), overwrite=args.overwrite)
        wrote(args, "--out", f"result           {args.out}")
    return 1 if (args.fail_on_flag and result.flagged) else 0


def main(argv=None) -> int:
    """``python -m topicdp.audit``."""
    parser = argparse.ArgumentParser(prog="topicdp audit", description=DESCRIPTION)
    add_audit_arguments(parser)
    args = parser.parse_args(argv)
    args.check, args.func = check_arguments, run_audit_cli
    try:
        return run_interruptible(args)
    except (ValueError, TypeError, FileNotFoundError, MissingExtraError) as exc:
        print(f"topicdp audit: error: {exc}", file=sys.stderr)
        return 2
