"""A newcomer's default release on real blog text, each plan line beside what was measured after the release.

Half of the bloggers (a hash of their id: ``--user-fraction 0.5``) are the private corpus; the other half are
held out for the scores. The release is exactly the command a newcomer runs first::

    topicdp privatize blogs.jsonl.gz --user-fraction 0.5 --unit UNIT --max-docs-per-user 20 (user level only)
        --topics 10 --max-features 2000 --epsilon 3 --delta 1e-6

(run here through :func:`topicdp.pipeline.release`, the command's library path). Then, on the same bounded
training corpus and the vocabulary the release used, a non-private gensim LDA is fitted, and the release is
scored on the held-out bloggers (:func:`topicdp.metrics.readability`): held-out NPMI and NPMI contrast (each
against gensim's), topic diversity, and the matched top-10 overlap with gensim's topics -- the scale on which
the plan's forecast is stated.

Run (a few minutes per unit on 2 cores)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/owners/newcomer_blogs.py --unit user --out docs/results/newcomer_blogs_user.md
    OPENBLAS_NUM_THREADS=1 python benchmarks/owners/newcomer_blogs.py --unit document --out docs/results/newcomer_blogs_document.md

Skips (exit 0, with a message) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import BLOGS  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--unit", choices=("user", "document"), default="user")
    ap.add_argument("--epsilon", type=float, default=3.0)
    ap.add_argument("--reference", default=None, help="optional public reference corpus (JSON Lines)")
    ap.add_argument("--out", default=None, help="write the transcript (markdown) here too")
    args = ap.parse_args()
    if not BLOGS.exists():
        print(f"skipped: {BLOGS} is absent")
        return 0

    from topicdp.corpus import Corpus, read_jsonl_records
    from topicdp.metrics.readability import readability
    from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy, release, user_selected
    from topicdp.topics import reference_lda

    cap = 20 if args.unit == "user" else None
    request = ReleaseRequest(CorpusSource(str(BLOGS), user_fraction=0.5, max_docs_per_user=cap),
                             VocabularyPolicy.dp(max_features=2000), epsilon=args.epsilon, delta=1e-6,
                             unit=args.unit, n_topics=10, reference=args.reference)
    lines: list[str] = []
    start = time.perf_counter()
    result = release(request, echo=lambda line: (lines.append(line), print(line)))
    seconds = time.perf_counter() - start
    rel = result.release

    records = list(read_jsonl_records(BLOGS))
    private = [(t, u) for t, u in records if user_selected(u, 0.5)]
    held = [(t, u) for t, u in records if not user_selected(u, 0.5)]
    train = Corpus.from_texts([t for t, _ in private], [u for _, u in private], vocabulary=list(rel.vocabulary))
    if cap is not None:
        train = train.bound(cap, None, random_state=0)
    heldout = Corpus.from_texts([t for t, _ in held], [u for _, u in held], vocabulary=list(rel.vocabulary))
    lda_start = time.perf_counter()
    lda = reference_lda(train, 10)
    lda_seconds = time.perf_counter() - lda_start
    ours = readability(rel.topic_word, rel.vocabulary, heldout, reference=lda)
    base = readability(lda, rel.vocabulary, heldout)
    forecast = result.decision.forecast if result.decision is not None else None

    def ratio(a, b):
        return f"{a / b:.2f}x" if a is not None and b else "n/a"

    kept = re.search(r"kept (\d+) words", "\n".join(lines))
    expected = re.search(r"about ([\d,]+) words", "\n".join(lines))
    out = [f"# Newcomer's release on blogs, {args.unit} level, epsilon {args.epsilon:g}", "",
           f"Private: {train.n_users} bloggers, {train.n_docs} posts after bounding (exact counts, for this note "
           f"only); held out: {heldout.n_users} bloggers.", "",
           "| the plan said | measured after the release |", "|---|---|"]
    count_line = next((ln for ln in lines if ln.startswith("plan:")), "")
    out.append(f"| {count_line} | {train.n_users if args.unit == 'user' else train.n_docs} {args.unit}s in the "
               "bounded training corpus |")
    if expected or kept:
        out.append(f"| vocabulary forecast: {expected.group(0) if expected else 'a bound only (no reference)'} | "
                   f"{kept.group(0) if kept else len(rel.vocabulary)} |")
    if forecast is not None:
        out.append(f"| {result.decision.mechanism}: expected top-10 overlap with a non-private LDA "
                   f"{forecast.overlap_with_lda:.2f} ({forecast.verdict}) | overlap with non-private gensim LDA "
                   f"{ours['overlap']:.2f} (measured / forecast {ours['overlap'] / forecast.overlap_with_lda:.2f}) |")
    out += ["", "| measure | release | gensim LDA (non-private) | release / gensim |", "|---|---|---|---|"]
    for key in ("npmi", "npmi_contrast", "diversity"):
        out.append(f"| {key} | {ours[key]:.3f} | {base[key]:.3f} | {ratio(ours[key], base[key])} |")
    out.append(f"| overlap with gensim LDA | {ours['overlap']:.2f} | 1 | |")
    out += ["", f"Wall time: release {seconds:.0f} s (whole pipeline, reading included); one gensim LDA fit "
            f"{lda_seconds:.0f} s.", "", "Released top words:", ""]
    out += [f"{k}. " + " ".join(w for w, _ in topic) for k, topic in enumerate(rel.top_words(10))]
    out += ["", "Plan and log as printed:", "", "```", *lines, "```"]
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
