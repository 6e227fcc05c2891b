"""Readability of non-private reference models on a real corpus, with controls.

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/utility/readability_reference.py [--corpus blogs|enron_sent]
        [--data ../shared/data] [--cache-only] [--passes 1] [--shuffles 20] [--out-json FILE]

Pipeline: users are split 80/20 by :func:`topicdp.metrics.heldout_user_mask` (the hash behind
``split_users``, seed 0); the vocabulary (``max_features=2000, min_df=5, max_df=0.5``, the project's
tokenisation) is built from the training users only (a non-private reference); both sides keep at most 20
posts per user (``Corpus.bound``, random_state 0). K = 10. Models: gensim LDA (the project's adapter,
seeds 0 and 1, ``passes`` from ``--passes``), scikit-learn NMF. Controls: the frequency list of the
training corpus cut into chunks of 10 words, and the LDA seed-0 top words dealt at random to the topics
(``--shuffles`` deals). All four readability measures are computed on the held-out users, overlap against
LDA seed 0. Last, the forecast (:mod:`topicdp.forecast`, LDA seed 0 as the signal) is set against
measured releases of the same kind: LDA seed 0 plus Gaussian noise of a few sigmas (one seeded draw each).

The tokenised corpus is cached outside the repository (``/tmp/<corpus>_cache/``: X_train.npz, X_test.npz
with *all* posts of each user, doc_users_{train,test}.json, vocab.json, README.txt) so that other runs
reuse it; :func:`load_cache` reads it back. The fitted matrices are stored there too
(``fits_K<K>_m<bound>_passes<p>.npz``, keys = model names) and reused by later runs. Skips (exit 0) when
the data folder is absent.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from topicdp import Corpus, GensimLDA, SklearnNMF
from topicdp.corpus import make_vectorizer, read_jsonl_records
from topicdp.forecast import forecast_readability
from topicdp.metrics import heldout_user_mask, readability, top_words_matrix

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import SHARED as SHARED_DATA  # noqa: E402

FILES = {"blogs": "blogs/blogs.jsonl.gz", "enron_sent": "enron_sent/enron_sent.jsonl.gz"}
VOCAB_OPTIONS = {"max_features": 2000, "min_df": 5, "max_df": 0.5}
TEST_FRACTION, SPLIT_SEED, MAX_DOCS_PER_USER = 0.2, 0, 20


def build_cache(source: Path, cache: Path) -> None:
    """Tokenise ``source`` once: training-user vocabulary, unbounded counts of both sides, to ``cache``."""
    t0 = time.perf_counter()
    records = list(read_jsonl_records(source))
    users = [u for _, u in records]
    unique = list(dict.fromkeys(users))
    test_users = {u for u, t in zip(unique, heldout_user_mask(unique, TEST_FRACTION, SPLIT_SEED)) if t}
    is_test = np.array([u in test_users for u in users])
    texts = [t for t, _ in records]
    del records
    vectorizer = make_vectorizer(**VOCAB_OPTIONS)
    X_train = vectorizer.fit_transform([t for t, s in zip(texts, is_test) if not s]).tocsr()
    X_test = vectorizer.transform([t for t, s in zip(texts, is_test) if s]).tocsr()
    cache.mkdir(parents=True, exist_ok=True)
    sp.save_npz(cache / "X_train.npz", X_train.astype(np.int32))
    sp.save_npz(cache / "X_test.npz", X_test.astype(np.int32))
    (cache / "doc_users_train.json").write_text(json.dumps([u for u, s in zip(users, is_test) if not s]))
    (cache / "doc_users_test.json").write_text(json.dumps([u for u, s in zip(users, is_test) if s]))
    (cache / "vocab.json").write_text(json.dumps(list(vectorizer.get_feature_names_out())))
    (cache / "README.txt").write_text(
        f"Made by benchmarks/utility/readability_reference.py (topicdp) from {source.name}: users split by "
        f"topicdp.metrics.heldout_user_mask(user_ids, test_fraction={TEST_FRACTION}, seed={SPLIT_SEED}) "
        f"(= split_users); vocabulary topicdp.corpus.make_vectorizer(**{VOCAB_OPTIONS}) fitted on the training "
        "users' posts only; X_*.npz are the counts of ALL posts (rows in file order, empty rows kept), "
        "doc_users_*.json the user id of each row. Load with benchmarks/utility/readability_reference.py:load_cache "
        "(Corpus.from_matrix, then .bound(20, random_state=0) for <= 20 posts per user).\n"
        "fits_K<K>_m<bound>_passes<p>.npz (written by later runs): non-private topic-word matrices keyed by model "
        "name, fitted on the training side bounded to <bound> posts per user (0 = all).\n")
    print(f"cache written to {cache} in {time.perf_counter() - t0:.0f} s: train {X_train.shape}, test {X_test.shape}",
          flush=True)


def load_cache(cache: Path, max_docs_per_user: int | None = MAX_DOCS_PER_USER) -> tuple[Corpus, Corpus]:
    """(train, test) corpora from a cache directory, each bounded to ``max_docs_per_user`` posts per user."""
    vocab = json.loads((cache / "vocab.json").read_text())
    out = []
    for side in ("train", "test"):
        X = sp.load_npz(cache / f"X_{side}.npz")
        users = json.loads((cache / f"doc_users_{side}.json").read_text())
        corpus = Corpus.from_matrix(X, vocab, users)
        out.append(corpus if max_docs_per_user is None else corpus.bound(max_docs_per_user, random_state=0))
    return out[0], out[1]


def frequency_chunks(train: Corpus, n_topics: int, top_n: int = 10) -> np.ndarray:
    """Control: the training corpus' most frequent words (token counts) cut by rank into lists of ``top_n``."""
    counts = np.asarray(train.X.sum(axis=0)).ravel()
    ranked = np.argsort(-counts, kind="stable")[: n_topics * top_n]
    return top_words_matrix(ranked.reshape(n_topics, top_n), train.n_words)


def shuffled_topics(topic_word: np.ndarray, rng: np.random.Generator, top_n: int = 10) -> np.ndarray:
    """Control: the topics' own top words dealt out at random to the topics (no repeat within a topic)."""
    top = np.argsort(-topic_word, axis=1, kind="stable")[:, :top_n]
    while True:
        dealt = rng.permutation(top.ravel()).reshape(top.shape)
        if all(len(set(row)) == top_n for row in dealt.tolist()):
            return top_words_matrix(dealt, topic_word.shape[1])


def measure(name: str, W: np.ndarray, test: Corpus, reference: np.ndarray, seconds: float | None = None) -> dict:
    r = readability(W, test.vocabulary, test, reference=reference)
    row = {"name": name, **{k: r[k] for k in ("npmi", "npmi_across", "npmi_contrast", "diversity", "overlap",
                                              "unseen_top_words")}, "fit_s": seconds,
           "top_words": [" ".join(t) for t in r["per_topic"]["top_words"]]}
    print(f"{name:32s} npmi {row['npmi']:+.3f}  across {row['npmi_across']:+.3f}  contrast "
          f"{row['npmi_contrast']:+.3f}  diversity {row['diversity']:.2f}  overlap {row['overlap']:.2f}", flush=True)
    return row


def fit_models(train: Corpus, n_topics: int, passes: int, store: Path | None) -> dict:
    """name -> (topic_word, seconds); reuses (and writes) ``store`` (.npz), since the LDA fits are the slow part."""
    specs = [("gensim-lda seed 0", GensimLDA(n_topics, 0, passes=passes)),
             ("gensim-lda seed 1", GensimLDA(n_topics, 1, passes=passes)),
             ("sklearn-nmf", SklearnNMF(n_topics, 0))]
    saved = dict(np.load(store)) if store is not None and store.exists() else {}
    fits = {}
    for name, model in specs:
        if name in saved:
            fits[name] = (saved[name], float(saved[name + " seconds"]))
            continue
        t = time.perf_counter()
        fits[name] = (model.fit_topic_word(train), time.perf_counter() - t)
        print(f"fitted {name} in {fits[name][1]:.0f} s", flush=True)
    if store is not None:
        np.savez(store, **{k: v[0] for k, v in fits.items()}, **{k + " seconds": v[1] for k, v in fits.items()})
    return fits


def run(train: Corpus, test: Corpus, fits: dict, n_shuffles: int, sigmas) -> dict:
    rows = []
    n_topics = fits["gensim-lda seed 0"][0].shape[0]
    lda = fits["gensim-lda seed 0"][0]
    for name, (W, sec) in fits.items():
        rows.append(measure(name, W, test, lda, sec))
    rows.append(measure("frequency chunks", frequency_chunks(train, n_topics), test, lda))
    rng = np.random.default_rng(0)
    deals = [measure(f"shuffled lda seed 0 #{i}", shuffled_topics(lda, rng), test, lda) for i in range(n_shuffles)]
    summary = {k: float(np.mean([d[k] for d in deals])) for k in ("npmi", "npmi_across", "npmi_contrast",
                                                                    "diversity", "overlap")}
    rows.append({"name": f"shuffled lda seed 0 (mean of {n_shuffles} deals)", **summary,
                 "sd_contrast": float(np.std([d["npmi_contrast"] for d in deals], ddof=1))})
    # the forecast against measured releases of the same kind: LDA seed 0 plus Gaussian noise of sigma
    forecasts = []
    for sigma in sigmas:
        f = forecast_readability(sigma, lda)
        noisy = lda + np.random.default_rng(1).normal(0.0, sigma, lda.shape)
        measured = readability(noisy, test.vocabulary, test, reference=lda)
        forecasts.append({"sigma": sigma, "noise_to_signal": f.noise_to_signal, "forecast_overlap": f.expected_overlap,
                          "verdict": f.verdict, "measured_overlap": measured["overlap"],
                          "measured_npmi": measured["npmi"], "measured_contrast": measured["npmi_contrast"]})
        print(json.dumps(forecasts[-1]), flush=True)
    return {"rows": rows, "forecast_vs_noisy_lda": forecasts, "sigma_readable": f.sigma_readable}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", choices=sorted(FILES), default="blogs")
    ap.add_argument("--data", type=Path, default=SHARED_DATA)
    ap.add_argument("--cache", type=Path, default=None, help="default /tmp/<corpus>_cache")
    ap.add_argument("--cache-only", action="store_true")
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--max-docs-per-user", type=int, default=MAX_DOCS_PER_USER, help="0: no bound")
    ap.add_argument("--passes", type=int, default=1, help="gensim LDA passes (the adapter's default is 1)")
    ap.add_argument("--shuffles", type=int, default=20, help="random deals of the shuffled-LDA control")
    ap.add_argument("--out-json", type=Path, default=None)
    ap.add_argument("--sigmas", default="0.001,0.003,0.01,0.03",
                    help="noise scales of the forecast-vs-measured check (comma-separated)")
    args = ap.parse_args()
    source = args.data / FILES[args.corpus]
    cache = args.cache or Path("/tmp") / f"{args.corpus.split('_')[0]}_cache"
    if not (cache / "vocab.json").exists():
        if not source.exists():
            print(f"skipped: {source} is absent")
            return 0
        build_cache(source, cache)
    if args.cache_only:
        return 0
    bound = args.max_docs_per_user or None
    train, test = load_cache(cache, bound)
    print(f"train {train}, test {test} (at most {bound} posts per user)", flush=True)
    store = cache / f"fits_K{args.topics}_m{bound or 0}_passes{args.passes}.npz"
    fits = fit_models(train, args.topics, args.passes, store)
    result = run(train, test, fits, args.shuffles, [float(x) for x in args.sigmas.split(",")])
    result.update(corpus=args.corpus, train=repr(train), test=repr(test), passes=args.passes, n_topics=args.topics,
                  max_docs_per_user=bound, vocabulary=VOCAB_OPTIONS, test_fraction=TEST_FRACTION,
                  split_seed=SPLIT_SEED)
    if args.out_json:
        args.out_json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
