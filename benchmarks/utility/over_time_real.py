"""Topics over time on real data under one persisted ledger (docs/results/over_time.md).

Enron's sent mail by quarter at the document level (add/remove neighbours: the quarters compose in parallel) and
the blogs by month at the user level (the months compose sequentially), each period released by
``topicdp.pipeline.over_time.release_over_time`` (dp-vem, K topics) on the users whose id hashes below
``--private-fraction`` (``CorpusSource(user_fraction=...)``). The other users stand in for public data: their
documents give the public word list (the ``--words`` most frequent words over all periods, document-frequency limits
and stop words as a vocabulary is built) and each period's held-out documents, on which every released period is
scored (held-out NPMI, NPMI contrast, topic diversity, and the top-10 overlap with a non-private gensim LDA fitted
on the same period's private documents). Also printed: what the series spent in the ledger, and what the same
per-period releases would spend at the user level.

Usage::

    python benchmarks/utility/over_time_real.py --corpus enron_sent --period quarter --periods 2000Q1:2002Q1 --unit document
    python benchmarks/utility/over_time_real.py --corpus blogs --period month --periods 2004-05:2004-08 --unit user

Skips (status 0, a line) when ``../shared/data/<corpus>`` is absent. ``--plot FILE.png`` draws the topics over time.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _data
from _data import SHARED  # noqa: E402

DATA = str(SHARED)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", choices=("enron_sent", "blogs"), required=True)
    p.add_argument("--period", choices=("month", "quarter"), required=True)
    p.add_argument("--periods", required=True, metavar="START:END")
    p.add_argument("--unit", choices=("document", "user"), required=True)
    p.add_argument("--epsilon", type=float, default=3.0, help="the series' total epsilon (default 3)")
    p.add_argument("--delta", type=float, default=1e-6)
    p.add_argument("--topics", type=int, default=10)
    p.add_argument("--words", type=int, default=2000)
    p.add_argument("--private-fraction", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--reference", action="store_true",
                   help="also give the stand-in public half as the public reference P: dp-vem starts from topics "
                        "fitted on it (2 iterations instead of 7) and the plan simulates on it")
    p.add_argument("--plot", default=None)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    path = os.path.join(DATA, args.corpus, f"{args.corpus}.jsonl.gz")
    if not os.path.exists(path):
        print(f"skipped: {path} is absent")
        return 0

    from topicdp.corpus import WEB_ARTEFACTS, Corpus, stop_word_list
    from topicdp.metrics.readability import heldout_npmi, npmi_contrast, topic_diversity, topic_overlap
    from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy
    from topicdp.pipeline.plan import dp_total, planned_steps
    from topicdp.pipeline.over_time import PeriodSpec, period_of, plot_over_time, release_over_time
    from topicdp.pipeline.plan import plan_request
    from topicdp.corpus import user_selected
    from topicdp.rdp import PrivacyLedger
    from topicdp.topics import reference_lda

    start, _, end = args.periods.partition(":")
    spec = PeriodSpec(args.period, start, end)
    stop = WEB_ARTEFACTS if args.corpus == "blogs" else ()
    t0 = time.perf_counter()
    private: dict = {label: ([], []) for label in spec.labels}
    public: dict = {label: ([], []) for label in spec.labels}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if not r.get("date"):
                continue
            label = period_of(r["date"], args.period)
            if label in private:
                side = private if user_selected(r["user"], args.private_fraction) else public
                side[label][0].append(r["text"])
                side[label][1].append(r["user"])
    texts = [t for label in spec.labels for t in public[label][0]]
    users = [u for label in spec.labels for u in public[label][1]]
    words = list(Corpus.from_texts(texts, users, min_df=5, max_df=0.5, max_features=args.words,
                                   stop_words=stop_word_list(stop)).vocabulary)
    print(f"read and split in {time.perf_counter() - t0:.0f} s; public word list: {len(words)} words", flush=True)

    work = tempfile.mkdtemp(prefix="over-time-")  # removed at the end (the reference holds texts)
    ledger = os.path.join(work, f"{args.corpus}.ledger")
    reference = None
    if args.reference:
        reference = os.path.join(work, "public.jsonl")
        with open(reference, "w", encoding="utf-8") as fh:
            for text, user in zip(texts, users):
                fh.write(json.dumps({"text": text, "user": user}) + "\n")
    neighbours = "add-remove"
    PrivacyLedger.open(ledger, budget=(args.epsilon, 1e-5), unit=args.unit, neighbours=neighbours)
    request = ReleaseRequest(CorpusSource(path, user_fraction=args.private_fraction, stop_words=tuple(stop)),
                             VocabularyPolicy.public(words), epsilon=args.epsilon, delta=args.delta, unit=args.unit,
                             n_topics=args.topics, mechanism="dp-vem", ledger=ledger, seed=args.seed, n_jobs=2,
                             release_anyway=True, reference=reference)
    t0 = time.perf_counter()
    result = release_over_time(request, spec, echo=lambda line: print(line, flush=True)
                               if not line.startswith("    ") else None)
    release_seconds = time.perf_counter() - t0
    rows = []
    for label in spec.labels:
        n_private, n_public = len(private[label][0]), len(public[label][0])
        row: dict = {"period": label, "private_docs": n_private, "private_users": len(set(private[label][1])),
                     "heldout_docs": n_public}
        if label in result.refused:
            row["refused"] = result.refused[label][:200]
            rows.append(row)
            continue
        W = result.matched(label)
        row["guarantee"] = result.releases[label].report.headline().split(maxsplit=1)[1]
        if n_public >= 20:
            heldout = Corpus.from_texts(public[label][0], public[label][1], vocabulary=words,
                                        stop_words=stop_word_list(stop))
            row.update(npmi=heldout_npmi(W, heldout, words), contrast=npmi_contrast(W, heldout, words),
                       diversity=topic_diversity(W))
            if n_private >= 50:
                corpus = Corpus.from_texts(private[label][0], private[label][1], vocabulary=words,
                                           stop_words=stop_word_list(stop))
                L = reference_lda(corpus, args.topics, random_state=args.seed)
                row.update(lda_npmi=heldout_npmi(L, heldout, words), lda_contrast=npmi_contrast(L, heldout, words),
                           lda_diversity=topic_diversity(L), overlap_with_lda=topic_overlap(W, L))
        rows.append(row)
        print(json.dumps(row), flush=True)
    reread = PrivacyLedger.open(ledger)
    summary = reread.file.summary(PrivacyLedger)
    totals = {"ledger_exact_at_1e-5": summary["dp"]["spent"], "basic": summary["dp"]["basic"],
              "per_period": result.budget[:2], "how": result.budget[2], "release_seconds": round(release_seconds)}
    if args.unit == "document":  # the same per-period releases at the user level: sequential, no partitions
        user = ReleaseRequest(CorpusSource(path), VocabularyPolicy.public(words), epsilon=result.budget[0],
                              delta=result.budget[1], unit="user", n_topics=args.topics, mechanism="dp-vem")
        planned = planned_steps(plan_request(user))
        run = planned.fixed + planned.worst([], 1e-5)
        n = len(spec.labels)
        totals["same_releases_at_user_level"] = {
            "exact_at_1e-5": dp_total(run * n, 1e-5), "exact_at_delta_sum": dp_total(run * n, n * args.delta),
            "basic": [n * result.budget[0], n * result.budget[1]]}
    print(json.dumps(totals, indent=1))
    print(summary_table(rows))
    if args.plot:
        plot_over_time(result, args.plot, overwrite=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "rows": rows, "totals": totals,
                       "top_words": result.top_words(5)}, fh, indent=1)
    shutil.rmtree(work)
    return 0


def summary_table(rows) -> str:
    def f(x, digits=3):
        return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"

    out = ["| period | private docs (users) | held-out docs | NPMI | contrast | diversity | LDA NPMI | LDA contrast | "
           "LDA diversity | overlap with LDA |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "refused" in r:
            out.append(f"| {r['period']} | {r['private_docs']} ({r['private_users']}) | {r['heldout_docs']} | refused: "
                       f"{r['refused'][:80]} | | | | | | |")
            continue
        out.append(f"| {r['period']} | {r['private_docs']} ({r['private_users']}) | {r['heldout_docs']} | "
                   f"{f(r.get('npmi'))} | {f(r.get('contrast'))} | {f(r.get('diversity'), 2)} | {f(r.get('lda_npmi'))} | "
                   f"{f(r.get('lda_contrast'))} | {f(r.get('lda_diversity'), 2)} | {f(r.get('overlap_with_lda'), 2)} |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
