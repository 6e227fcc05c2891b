"""``topicdp evaluate``: a release's NPMI and contrast on the owner's corpus under DP (:mod:`topicdp.metrics.private`),
read against public scales (:mod:`topicdp.metrics.yardstick`); an evaluation whose interval would be refused whatever
the noise is refused before anything is spent or read, by ``topicdp compare``'s rule."""

from __future__ import annotations

import argparse
import json
import sys

from ._files import add_overwrite_argument, atomic_write, check_file_flags, wrote

DESCRIPTION = (
    "Evaluate a published release on the private corpus under differential privacy: each topic's NPMI and NPMI "
    "contrast of its top 10 words, with an interval that accounts for the noise. This is a release of its own: it "
    "spends --epsilon/--delta at the release's unit and neighbour relation (unless --unit/--neighbours say "
    "otherwise), on top of what the release spent. With --reference (public) it also prints, free, a yardstick (a "
    "non-private LDA's scores on the reference) and flags topics made of the reference's most common words.")


def populate(parser: argparse.ArgumentParser) -> None:
    """The ``evaluate`` sub-command's arguments (``topicdp.cli`` calls it when evaluate is used)."""
    parser.description = DESCRIPTION
    parser.add_argument("release", help="a published release file (JSON) written by topicdp privatize")
    parser.add_argument("corpus", help="the private corpus: a JSON Lines (.jsonl[.gz]), Parquet or CSV file with user "
                        "and text fields, or a database URL with --query")
    parser.add_argument("--query", default=None, metavar="SQL",
                        help="with a database URL as the corpus: the query whose rows are the records")
    parser.add_argument("--epsilon", type=float, required=True, help="budget of this evaluation")
    parser.add_argument("--delta", type=float, default=1e-6, help="default 1e-6")
    parser.add_argument("--unit", choices=("document", "user"), default=None, help="default: the release's")
    parser.add_argument("--neighbours", choices=("add-remove", "replace-one"), default=None,
                        help="default: the release's")
    parser.add_argument("--clip", type=float, default=None,
                        help="per-unit L2 clipping norm (default: one document holding every top word)")
    parser.add_argument("--level", type=float, default=0.9, help="nominal coverage of the intervals (default 0.9)")
    parser.add_argument("--text-field", default="text", help="the records' text field (default text)")
    parser.add_argument("--user-field", default="user", help="the records' user id field (default user)")
    parser.add_argument("--reference", default=None,
                        help="a public corpus of the same kind (JSON Lines, Parquet or CSV): print the expected error before "
                        "spending, and a yardstick and common-words flag to read the scores by (free: public data)")
    parser.add_argument("--n-units", type=int, default=None,
                        help="stated number of units (documents, or users) for that forecast (default: the reference's)")
    parser.add_argument("--ledger", default=None, metavar="FILE",
                        help="charge the evaluation to the dataset's persisted privacy ledger FILE (topicdp ledger "
                             "create): checked before the corpus is read, written before the noise is drawn")
    parser.add_argument("--seed", type=int, default=None, help="seed the noise (testing only; marked seeded)")
    parser.add_argument("--out", default=None, help="write the evaluation (JSON) here")
    add_overwrite_argument(parser)
    parser.set_defaults(func=run, check=check_arguments)


def check_arguments(args: argparse.Namespace) -> None:
    """Before anything is read: the output path, and the numbers (named as flags)."""
    from ._validation import check_delta, check_epsilon, check_real

    check_epsilon(args.epsilon, "--epsilon")
    check_delta(args.delta, "--delta")
    check_real(args.level, "--level", low=0.0, high=1.0)
    if args.clip is not None:
        check_real(args.clip, "--clip", low=0.0)
    if args.n_units is not None:
        check_real(args.n_units, "--n-units", low=0.0)
    check_file_flags(args, ("--out",), ("release", "corpus", "--reference", "--ledger"))


def run(args: argparse.Namespace) -> int:
    """Read the release (public) and the corpus over the release's words (only the top words and the number of
    documents are counted), evaluate, print, write."""
    from .corpus import Corpus, read_source_records
    from .metrics import private as pv
    from .metrics.yardstick import public_scale
    from .private_release import PrivateRelease

    release = PrivateRelease.load(args.release)
    unit, neighbours = args.unit or release.report.unit, args.neighbours or release.report.neighbours

    def read(records: list) -> Corpus:
        # the release's own columns: N counts the documents holding a word of them, as the release's corpus did
        return Corpus.from_texts([t for t, _ in records], [u for _, u in records], vocabulary=list(release.vocabulary))

    def records_of(path: str, query: str | None = None) -> list:
        return list(read_source_records(path, args.text_field, args.user_field, query=query))

    design = pv.coherence_design([[w for w, _ in topic] for topic in release.top_words(10)])  # public: the lists
    public, forecast = None, None
    if args.reference:  # public facts only: the lists, the reference's rates, the stated size, sigma
        public = records_of(args.reference)
        reference = read(public)
        rates = pv.reference_rates(reference, design, unit, args.clip)
        n_units = args.n_units or (reference.n_docs if unit == "document" else reference.n_users)
        forecast = pv.predict_error(design, rates, n_units, epsilon=args.epsilon,
                                    delta=args.delta, unit=unit, neighbours=neighbours, clip=args.clip, n_sim=50)
        print(f"forecast before spending (from --reference): {forecast.line()}")
    # refused whatever the noise draws: decided on public facts before anything is spent or read, by compare's rule;
    # the forecast's refusal (above) is printed, and the owner who asked for this evaluation decides on it
    why = pv.interval_refusal(design, unit, args.clip)
    if why is not None:
        print(f"topicdp evaluate: refused before spending (nothing spent, the corpus not read): its interval would be "
              f"refused: {why}", file=sys.stderr)
        return 2
    # free, before anything private is read: the public reference and the released lists only
    scale = public_scale(unit, release.n_topics,
                         None if public is None else ([t for t, _ in public], [u for _, u in public]))
    ledger = None
    if args.ledger:  # the dataset's ledger: verified, and checked against this evaluation, before the corpus is read
        from .rdp import PrivacyLedger

        ledger = PrivacyLedger.open(args.ledger)
        ledger.check(pv.planned_entries(design, args.epsilon, args.delta, unit, neighbours, args.clip))
    corpus = read(records_of(args.corpus, args.query))
    result = release.evaluate(corpus, epsilon=args.epsilon, delta=args.delta, unit=unit,
                              neighbours=neighbours, clip=args.clip, level=args.level, ledger=ledger,
                              random_state=args.seed)
    print(result.summary())
    print("\n".join(scale.lines(result)))
    if args.out:
        published = {**result.to_dict(), "reading": scale.as_dict(result.top_words)}  # the reading is public
        atomic_write(args.out, json.dumps(published), overwrite=args.overwrite)
        wrote(args, "--out", f"wrote {args.out}")
    return 0
