"""``topicdp ledger``: create a dataset's persisted privacy ledger, or show what it holds.

``topicdp ledger create FILE --epsilon E --delta D --unit U --neighbours N`` starts a ledger (never over an
existing file); ``topicdp privatize ... --ledger FILE`` charges releases to it; ``topicdp ledger show FILE``
prints the spend by the ledger's exact accounting and by basic composition, what is left, and every release
with its date, guarantee, mechanism and output file (``--json``: the same as JSON); ``topicdp ledger reseal
FILE`` writes a new head for a ledger whose head file is missing, on the owner's word that the file is whole.
Standard library only at import (the command line's parser is built without numpy).
"""

from __future__ import annotations

import argparse
import json
import math

DESCRIPTION = __doc__.split("\n\n")[1].replace("\n", " ")


def populate(parser: argparse.ArgumentParser) -> None:
    """The ``ledger`` sub-command's arguments and functions (``topicdp.cli`` calls it when ledger is used)."""
    parser.description = DESCRIPTION
    sub = parser.add_subparsers(dest="ledger_command", required=True)
    create = sub.add_parser("create", help="start a persisted ledger for one dataset")
    create.add_argument("file", help="the ledger file to create (refused if it exists)")
    create.add_argument("--epsilon", type=float, required=True, help="the dataset's total epsilon > 0")
    create.add_argument("--delta", type=float, required=True, help="the dataset's total delta in (0, 1)")
    create.add_argument("--unit", choices=("user", "document"), required=True, help="privacy unit of every release")
    create.add_argument("--neighbours", choices=("add-remove", "replace-one"), required=True,
                        help="neighbour relation of every release (replace-one: privatize with --n-units)")
    create.add_argument("--accounting", choices=("best", "rdp", "exact", "simple"), default="best",
                        help="the total the budget is checked against (default best: the tightest valid one)")
    create.set_defaults(func=cmd_create, check=lambda args: None)
    show = sub.add_parser("show", help="what a ledger has spent, what is left, and every release")
    show.add_argument("file", help="the ledger file")
    show.add_argument("--json", action="store_true", help="print the summary as JSON")
    show.set_defaults(func=cmd_show, check=lambda args: None)
    reseal = sub.add_parser("reseal", help="write a new head for a ledger whose head file is missing, vouching "
                                           "that the file is whole")
    reseal.add_argument("file", help="the ledger file (its chain is verified first)")
    reseal.set_defaults(func=cmd_reseal, check=lambda args: None)


def cmd_create(args: argparse.Namespace) -> int:
    from .ledger_file import LedgerFile

    LedgerFile.create(args.file, (args.epsilon, args.delta), args.unit, args.neighbours, args.accounting)
    print(f"ledger {args.file} created: budget ({args.epsilon:g}, {args.delta:g})-DP for each {args.unit}, "
          f"{args.neighbours} neighbours, {args.accounting} accounting")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from .ledger import PrivacyLedger

    ledger = PrivacyLedger.open(args.file)
    assert ledger.file is not None
    summary = ledger.file.summary(PrivacyLedger)
    print(json.dumps(summary, indent=2) if args.json else format_summary(summary))
    return 0


def cmd_reseal(args: argparse.Namespace) -> int:
    from .ledger import PrivacyLedger
    from .ledger_file import LedgerFile

    store = LedgerFile(args.file)
    if not store.reseal():
        print(f"ledger {store.path}: its head {store.path}.head is present and agrees with the file; nothing to "
              "reseal")
        return 0
    summary = store.summary(PrivacyLedger)
    n_runs = len(summary["runs"])
    last = f", the last on {summary['runs'][-1]['date']}" if n_runs else ""
    print(f"ledger {store.path}: resealed with {n_runs} run" + ("" if n_runs == 1 else "s") + f"{last}. Every line "
          "continues the hash chain, but a chain cannot show lines cut from its end: by resealing you vouch that "
          "the file is whole (no run missing). What it now holds:")
    print(format_summary(summary))
    return 0


def _eps(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.4g}"


def format_summary(s: dict) -> str:
    """The lines ``topicdp ledger show`` prints for a :meth:`LedgerFile.summary` (a run of one part of a partitioning
    says which: parts of one partitioning compose in parallel, partitionings sequentially)."""
    eps_b, delta_b = s["budget"]["epsilon"], s["budget"]["delta"]
    dp = s["dp"]
    lines = [f"ledger {s['file']}: each {s['unit']}, {s['neighbours']} neighbours; budget ({eps_b:g}, {delta_b:g})-DP "
             f"({s['accounting']} accounting); created {s['created']}",
             f"DP releases: {dp['n_runs']}",
             f"  spent      {_eps(dp['spent'])} at delta {delta_b:g} by the ledger's exact accounting",
             f"             {_eps(dp['basic']['epsilon'])} at delta {dp['basic']['delta']:.3g} by basic composition "
             "(the runs' own guarantees added up)",
             f"  remaining  {_eps(dp['remaining'])} of epsilon {eps_b:g} (exact accounting)"]
    if "random_dp" in s:
        r = s["random_dp"]
        lines += [f"random-DP releases (NOT DP; never counted in the DP budget): {r['n_runs']}",
                  f"  all releases together: {_eps(r['spent_all'])} at delta {delta_b:g}, with probability at least "
                  f"1 - {r['gamma']:.3g} over P's pairs"]
    lines.append("releases:")
    for run in s["runs"]:
        guarantee = f"({_eps(run['epsilon'])}, {run['delta']:.3g})" if run["epsilon"] is not None else "?"
        if run["gamma"] is not None:
            guarantee += f" random-DP, gamma {run['gamma']:.3g}"
        part = f"  part {run['partition']}" if run.get("partition") else ""
        lines.append(f"  {run['date']}  {run['run']}  {guarantee}  {run['mechanism'] or '-'}  -> "
                     f"{run['output'] or '(no output file)'}  [{run['status']}]{part}")
    return "\n".join(lines)
