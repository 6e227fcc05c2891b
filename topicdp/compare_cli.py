"""``topicdp compare``: every road on one corpus, from the command line (the harness is :mod:`topicdp.experiments`)."""

from __future__ import annotations

from ._extras import require
from ._files import add_overwrite_argument, check_output_directory
from ._names import UNITS


def populate(p) -> None:
    """The ``compare`` sub-command's arguments and functions (``topicdp.cli`` calls it when compare is used)."""
    p.add_argument("corpus", nargs="?", default="embedded",
                   help="'embedded' (default: the public Lee corpus) or a JSON Lines file (.jsonl[.gz]) with user and "
                        "text fields")
    p.add_argument("--out", required=True, help="output directory: table.md (publishable), diagnostics.md (the "
                   "owner's exact scores, not for publication), compare.png; a rerun with the same settings resumes")
    p.add_argument("--reference", default=None,
                   help="a public corpus of the same kind (JSON Lines; 'embedded' with the embedded corpus: its first "
                        "half): the vocabulary, dp-vem's start and the random-DP road's P. Needed for a file")
    p.add_argument("--unit", default=None, help="privacy unit: user (default), document, or both comma-separated "
                   "(user,document; --quick's default)")
    p.add_argument("--epsilons", default=None, help="total epsilons of the releases, comma-separated (default 1,3,10; "
                   "--quick: 3)")
    p.add_argument("--topics", default=None, help="number of topics K >= 2 (default 10; --quick: 5)")
    p.add_argument("--evaluation-epsilon", default=None,
                   help="each private evaluation's epsilon (default 10 at the user level, 1 at the document level)")
    p.add_argument("--quick", action="store_true", help="both units (user and document level), K = 5, epsilon 3, "
                   "1,000 words, dp-vem decided on its closed form, the random-DP road on the exchangeable sample, no "
                   "non-private ceiling in the diagnostics (minutes)")
    p.add_argument("--no-random-dp", action="store_true", help="leave out the random-DP road (its sensitivity sample "
                   "fits the model some 285 times on P, 9 times with --sizing exchangeable)")
    p.add_argument("--sizing", default=None, help="the random-DP road's sensitivity sample: lambert-w "
                   "(default: 285 pairs at gamma 0.1) or exchangeable (9 pairs at gamma 0.1; --quick's default)")
    p.add_argument("--gamma", type=float, default=0.1, help="gamma of the random-DP road (default 0.1)")
    p.add_argument("--max-docs-per-user", type=int, default=20,
                   help="documents kept per user at the user level (default 20)")
    p.add_argument("--max-features", type=int, default=None, help="words of the vocabulary (default 2000; --quick 1000)")
    p.add_argument("--n-units", default=None, metavar="N",
                   help="the number of training units (users, or documents at the document level: the ones the "
                        "held-out split leaves to the releases; the owner's diagnostics give it), stated public: every "
                        "release then has replace-one neighbours with that count, as topicdp privatize --n-units; the "
                        "spectral configurations need it and are refused without it. Default: each release counts "
                        "its units under DP")
    p.add_argument("--ledger", default=None, metavar="FILE",
                   help="charge every release and evaluation to the dataset's persisted privacy ledger FILE "
                        "(topicdp ledger create), as topicdp privatize/evaluate --ledger do; table.md states its total")
    p.add_argument("--seed", default=None, metavar="N", help="seed every noise draw (testing only; each report says "
                   "so)")
    p.add_argument("--n-jobs", type=int, default=2)
    add_overwrite_argument(p)
    p.set_defaults(func=run, check=check_arguments)


def parse_epsilons(text: str | None, flag: str = "--epsilons") -> tuple[float, ...] | None:
    """``--epsilons 1,3,10`` as floats; a bad value is refused by the flag's name."""
    if text is None:
        return None
    try:
        values = tuple(float(v) for v in str(text).split(",") if v.strip())
    except ValueError:
        values = ()
    if not values or any(not 0 < v < float("inf") for v in values):
        raise ValueError(f"{flag} must be finite numbers > 0 separated by commas (e.g. 1,3,10), got {text!r}")
    return values


def parse_int(text, flag: str, low: int) -> int | None:
    if text is None:
        return None
    try:
        value = int(str(text))
    except ValueError:
        raise ValueError(f"{flag} must be an integer >= {low}, got {text!r}") from None
    if value < low:
        raise ValueError(f"{flag} must be an integer >= {low}, got {value}")
    return value


def settings_from(args):
    """The :class:`CompareSettings` of the flags (every flag checked by its name)."""
    from .experiments.compare import CompareSettings

    given: dict = {"n_jobs": args.n_jobs, "max_docs_per_user": args.max_docs_per_user, "gamma": args.gamma}
    if args.unit is not None:
        units = tuple(u.strip() for u in str(args.unit).split(","))
        if not units or any(u not in UNITS for u in units):
            raise ValueError(f"--unit must be one of {', '.join(UNITS)} or both comma-separated, got {args.unit!r}")
        given["unit"] = units[0] if len(units) == 1 else units
    if args.sizing is not None and args.sizing not in ("lambert-w", "exchangeable"):
        raise ValueError(f"--sizing must be lambert-w or exchangeable, got {args.sizing!r}")
    epsilons, topics = parse_epsilons(args.epsilons), parse_int(args.topics, "--topics", 2)
    parsed = {"sizing": args.sizing, "random_dp": False if args.no_random_dp else None, "epsilons": epsilons,
              "n_topics": topics, "max_features": parse_int(args.max_features, "--max-features", max(topics or 2, 2)),
              "n_units": parse_int(args.n_units, "--n-units", 1), "seed": parse_int(args.seed, "--seed", 0)}
    given.update({name: value for name, value in parsed.items() if value is not None})
    units = given.get("unit", ("user", "document") if args.quick else "user")
    if "n_units" in given and not isinstance(units, str):
        raise ValueError("--n-units states one unit's count: give --unit user or --unit document with it")
    if args.evaluation_epsilon is not None:
        value = parse_epsilons(args.evaluation_epsilon, "--evaluation-epsilon")
        if value is None or len(value) != 1:
            raise ValueError(f"--evaluation-epsilon must be one number > 0, got {args.evaluation_epsilon!r}")
        given["evaluation_epsilon"] = value[0]
    return CompareSettings.quick(**given) if args.quick else CompareSettings(**given)


def check_arguments(args) -> None:
    """Every argument of ``compare``, before the corpus is read."""
    from ._validation import check_n_jobs
    from .pipeline.request import check_corpus_path

    require("matplotlib", extra="plots", purpose="compare's plot")  # before minutes of computing, not after
    check_corpus_path(args.corpus)
    check_output_directory(args.out, "--out", {"the corpus": args.corpus, "the reference": args.reference,
                                               "the ledger": args.ledger},
                           resumes="settings.json", overwrite=args.overwrite)
    if args.ledger is not None:
        from .rdp.ledger_file import LedgerOptions

        try:
            LedgerOptions(args.ledger)  # an existing ledger file, before anything is read
        except FileNotFoundError as exc:
            raise FileNotFoundError(f"--ledger: {exc}") from None
    if args.reference == "embedded" and args.corpus != "embedded":
        raise ValueError("--reference embedded (the first half of the Lee corpus) goes with the embedded corpus only")
    if args.reference not in (None, "embedded"):
        check_corpus_path(args.reference, "--reference")
    if args.reference is None and args.corpus != "embedded":
        raise ValueError("--reference: a corpus file needs a public reference P (JSON Lines of the same kind) for "
                         "its words, dp-vem's start and the random-DP road")
    if args.max_docs_per_user < 1:
        raise ValueError(f"--max-docs-per-user must be an integer >= 1, got {args.max_docs_per_user}")
    check_n_jobs(args.n_jobs, "--n-jobs")
    args.settings = settings_from(args)


def run(args) -> int:
    from pathlib import Path

    from .experiments.compare import compare

    settings = getattr(args, "settings", None) or settings_from(args)
    if args.overwrite:  # without the earlier settings compare starts again, its results removed
        Path(args.out, "settings.json").unlink(missing_ok=True)
    args.written = [f"--out ({args.out}: table.md, diagnostics.md, results.jsonl; a rerun resumes)"]
    result = compare(args.corpus, args.out, settings, reference=args.reference, ledger=args.ledger)
    print(f"table:       {result['table']} (publishable)")
    print(f"diagnostics: {result['diagnostics']} (exact scores: NOT for publication)")
    print(f"time:        {result['seconds']:.0f} s")
    return 0
