"""What the default release gives on real text without a public corpus of the same kind (and with one, for
comparison): held-out scores beside the released top words.

Users are split by a hash of their id (:func:`topicdp.pipeline.user_selected`, so the split is a per-user
rule): ``h < 0.5`` private, ``0.5 <= h < 0.75`` the public reference of the "with public data" rows, the rest
held out for the scores. Each row is the command a data owner runs (through :func:`topicdp.pipeline.release`):

    topicdp privatize private.jsonl --unit UNIT [--max-docs-per-user 20] --topics 10 --max-features 2000
        --epsilon EPS --delta 1e-6 [--reference reference.jsonl]

i.e. a DP count of the units, a DP vocabulary (20% of epsilon) and the mechanism the plan picks. A refusal
(the forecast says noise) is a row too, with its reason. Scores (:func:`topicdp.metrics.readability`) are on
the held-out users, on the release's own vocabulary: NPMI and NPMI contrast against a non-private gensim
LDA fitted on the same bounded private corpus, topic diversity, and the matched top-10 overlap with that LDA.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/utility/no_public_data.py \
        [--corpora blogs enron_sent] [--epsilons 1 3 10] [--with-public-at 3] [--word-list FILE] [--out FILE]

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import SHARED as DATA  # noqa: E402


def split_records(name: str) -> tuple[list, list, list]:
    """(private, reference, held-out) (text, user) records of one corpus: ``h < 0.5``, ``0.5 <= h < 0.75``, the rest."""
    from topicdp.corpus import read_jsonl_records
    from topicdp.pipeline import user_selected

    private, reference, held = [], [], []
    for text, user in read_jsonl_records(DATA / name / f"{name}.jsonl.gz"):
        part = private if user_selected(user, 0.5) else reference if user_selected(user, 0.75) else held
        part.append((text, user))
    return private, reference, held


def split(name: str, workdir: Path) -> tuple[str, str, list]:
    """(private file, reference file, held-out records) of one corpus."""
    private, reference, held = split_records(name)
    paths = []
    for label, rows in (("private", private), ("reference", reference)):
        path = workdir / f"{name}-{label}.jsonl"
        path.write_text("".join(json.dumps({"text": t, "user": u}) + "\n" for t, u in rows))
        paths.append(str(path))
    return paths[0], paths[1], held


def one_release(private: str, reference: str | None, held: list, unit: str, epsilon: float,
                words: list[str] | None = None) -> dict:
    from topicdp.corpus import Corpus, read_jsonl_records
    from topicdp.metrics.readability import readability
    from topicdp.pipeline import CorpusSource, ReleaseRefused, ReleaseRequest, VocabularyPolicy, release
    from topicdp.topics import reference_lda

    cap = 20 if unit == "user" else None
    vocabulary = VocabularyPolicy.dp(max_features=2000) if words is None else VocabularyPolicy.public(words)
    request = ReleaseRequest(CorpusSource(private, max_docs_per_user=cap), vocabulary,
                             epsilon=epsilon, delta=1e-6, unit=unit, n_topics=10, reference=reference)
    lines: list[str] = []
    start = time.perf_counter()
    try:
        result = release(request, echo=lines.append)
    except ReleaseRefused as refused:
        return {"refused": str(refused), "seconds": time.perf_counter() - start, "lines": lines}
    seconds = time.perf_counter() - start
    rel = result.release
    records = list(read_jsonl_records(private))
    train = Corpus.from_texts([t for t, _ in records], [u for _, u in records], vocabulary=list(rel.vocabulary))
    if cap is not None:
        train = train.bound(cap, None, random_state=0)
    heldout = Corpus.from_texts([t for t, _ in held], [u for _, u in held], vocabulary=list(rel.vocabulary))
    lda = reference_lda(train, 10)
    ours = readability(rel.topic_word, rel.vocabulary, heldout, reference=lda)
    base = readability(lda, rel.vocabulary, heldout)
    forecast = result.decision.forecast if result.decision is not None else None
    return {"mechanism": result.decision.mechanism if result.decision else rel.report.mechanism,
            "words": len(rel.vocabulary), "ours": ours, "base": base, "seconds": seconds,
            "forecast": None if forecast is None else forecast.overlap_with_lda,
            "top": [" ".join(w for w, _ in topic[:8]) for topic in rel.top_words(8)], "lines": lines}


def ratio(a, b) -> str:
    return f"{a / b:.2f}x" if a is not None and b else "n/a"


def row(corpus: str, unit: str, eps: float, public: bool, r: dict) -> str:
    head = f"| {corpus} | {unit} | {eps:g} | {'yes' if public else 'no'} |"
    if "refused" in r:
        reason = r["refused"].split(";")[0]
        return head + f" refused | | | | | | | {reason} |"
    o, b = r["ours"], r["base"]
    fc = f"{r['forecast']:.2f}" if r["forecast"] is not None else "-"
    return (head + f" {r['mechanism']} | {r['words']} | {ratio(o['npmi'], b['npmi'])} | "
            f"{ratio(o['npmi_contrast'], b['npmi_contrast'])} | {o['diversity']:.2f} | {o['overlap']:.2f} | {fc} | "
            f"{r['top'][0]} / {r['top'][1]} / {r['top'][2]} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", nargs="+", default=["blogs", "enron_sent"])
    ap.add_argument("--units", nargs="+", default=["document", "user"])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 3.0, 10.0])
    ap.add_argument("--with-public-at", type=float, nargs="*", default=[3.0])
    ap.add_argument("--word-list", default=None, metavar="FILE",
                    help="a public word list (one word a line, e.g. from benchmarks/utility/wordfreq_list.py) "
                         "instead of the DP vocabulary")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if not DATA.exists():
        print(f"skipped: {DATA} is absent")
        return 0
    header = ["| corpus | unit | epsilon | public data | mechanism | words | NPMI x gensim | contrast x gensim | "
              "diversity | overlap | forecast | released top words (topics 0-2) |",
              "|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|"]
    rows, details = list(header), []
    words = None if args.word_list is None else Path(args.word_list).read_text().split()
    print("\n".join(header), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in args.corpora:
            private, reference, held = split(corpus, Path(tmp))
            for unit in args.units:
                runs = [(e, False) for e in args.epsilons] + [(e, True) for e in args.with_public_at]
                for eps, public in runs:
                    r = one_release(private, reference if public else None, held, unit, eps, words)
                    rows.append(row(corpus, unit, eps, public, r))
                    print(rows[-1], f"({r['seconds']:.0f} s, load {os.getloadavg()[0]:.2f})", flush=True)
                    title = f"{corpus}, {unit} level, epsilon {eps:g}, {'with' if public else 'without'} public data"
                    body = r.get("top") or [r["refused"]]
                    details += [f"### {title}", "", *[f"{k}. {t}" for k, t in enumerate(body)], ""]
    text = "\n".join(rows + ["", "## Released top words", "", *details])
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
