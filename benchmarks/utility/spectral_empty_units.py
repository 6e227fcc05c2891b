"""What the zero units of DPSpectralMoments cost: the share of usable units on real corpora, and the recovery bias.

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/utility/spectral_empty_units.py shares [--data DIR]
    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/utility/spectral_empty_units.py synthetic
        [--docs 50000] [--words 100] [--topics 5] [--seeds 5]

DPSpectralMoments normalises its moments by the public number of units n, counted before filtering; a unit with no
usable document (every document shorter than 3 in-vocabulary tokens, or empty) contributes zero statistics
(``topicdp.spectral.moments``, "Zero units"). With a share s of usable units the first-order terms of the
moments shrink by s and the cross terms by about s^2 (M2) and s^3 (M3).

``shares`` -- for ``../shared/data/blogs`` and ``../shared/data/enron_sent`` (skipped when absent): the
    share of usable users (owning a document with >= 3 in-vocabulary tokens) and of usable documents, at a
    2,000-word vocabulary: the non-private top 2,000 words (``Corpus.from_texts(min_df=5, max_df=0.5,
    max_features=2000)``, topicdp's tokenisation and English stop words), the usual vocabulary of
    ``benchmarks/utility/vocabulary_blogs.py``. Counts are of every record of the file (empty texts included).
``synthetic`` -- generated LDA corpora (``synthetic_lda``: topics ~ Dirichlet(0.1), Poisson(100) lengths,
    alpha0 = 1, symmetric alpha; the setting of ``bench_spectral_utility.py``) with a random fraction 1 - s of
    the documents emptied (their rows set to zero: out-of-vocabulary texts), s in {1, 0.99, 0.95, 0.9, 0.8}; the
    document level (the algebra is the same at the user level, with users for documents). Columns: the
    recovery error (``topicdp.metrics.recovery_error``: mean L1 per topic after Hungarian matching) of
    (a) the non-private spectral LDA on the usable documents only (normalised by U = s n: no bias, the same
    data), (b) the same estimator with the moments normalised by n and the emptied documents as zero units,
    without noise (the bias alone), (c) DPSpectralMoments configuration 1 with n_units = n at epsilon = 1000 and
    (d) at epsilon = 3 (delta = 1e-7; median over ``--seeds`` noise draws), (e) DPSpectralMoments at epsilon = 3 on the
    usable documents alone with their number U as n (as if U were public: the calibration this change
    replaces, and the best any correction of the bias could do at the same noise), and the sum of the
    recovered alpha of (b) (alpha0 = 1; the bias scales it by about s).

Seeded noise: these are measurements, not releases.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import SHARED as DATA  # noqa: E402
FILES = {"blogs": "blogs/blogs.jsonl.gz", "enron_sent": "enron_sent/enron_sent.jsonl.gz"}
SHARES = (1.0, 0.99, 0.95, 0.9, 0.8)  # 0.9: about enron_sent's share of usable documents


def read(path: Path) -> tuple[list, list]:
    """(texts, users) through the library's one reader (canonical user ids, errors with path:line)."""
    from topicdp.corpus import read_jsonl_records

    pairs = list(read_jsonl_records(path, "text", "user"))
    return [t for t, _ in pairs], [u for _, u in pairs]


def shares(data: Path, n_words: int = 2000) -> list[dict]:
    from topicdp import Corpus
    from topicdp.spectral.moments import MIN_DOC_LENGTH

    rows = []
    for name, rel in FILES.items():
        path = data / rel
        if not path.exists():
            print(f"{name}: {path} absent, skipped", flush=True)
            continue
        texts, users = read(path)
        corpus = Corpus.from_texts(texts, users, min_df=5, max_df=0.5, max_features=n_words)
        lengths = np.asarray(corpus.X.sum(axis=1)).ravel()
        usable = lengths >= MIN_DOC_LENGTH
        n_users = len(set(users))  # before filtering: the census of the file
        usable_users = np.unique(corpus.doc_users[usable]).size
        row = {"corpus": name, "vocabulary": corpus.n_words, "documents": len(texts),
               "usable_documents": int(usable.sum()), "users": n_users, "usable_users": int(usable_users),
               "s_documents": usable.sum() / len(texts), "s_users": usable_users / n_users}
        rows.append(row)
        print(f"{name}: d = {row['vocabulary']}, users {usable_users}/{n_users} usable (s = {row['s_users']:.4f}), "
              f"documents {row['usable_documents']}/{row['documents']} (s = {row['s_documents']:.4f})", flush=True)
    return rows


def _zero_unit_fit(X, n: int, k: int, alpha0: float):
    """The non-private estimator on the moments normalised by n (emptied rows as zero units): the bias alone."""
    from topicdp.spectral.moments import M2Operator, prepare_corpus, whitened_m3
    from topicdp.spectral.recovery import recover_topics
    from topicdp.spectral.tensor import power_method
    from topicdp.spectral.whitening import whiten

    c = prepare_corpus(X, n_units=n)
    rng = np.random.default_rng(0)
    wh = whiten(M2Operator(c, alpha0).matmat, c.n_words, k, rng=rng)
    dec = power_method(whitened_m3(c, alpha0, wh.W), rng=rng, n_restarts=5)
    topics, alpha, _ = recover_topics(dec.values, dec.vectors, wh.B, alpha0, "project")
    return topics, alpha


def synthetic(n_docs: int, n_words: int, k: int, seeds: int, alpha0: float = 1.0, delta: float = 1e-7) -> list[dict]:
    import scipy.sparse as sp

    from topicdp.datasets import synthetic_lda
    from topicdp.metrics import recovery_error
    from topicdp.spectral import PreconditionError, DPSpectralMoments, SpectralLDA

    from topicdp._repeats import RepeatedReleaseWarning

    warnings.simplefilter("ignore", RepeatedReleaseWarning)  # one corpus fitted many times: measurements
    data = synthetic_lda(n_docs, n_words, k, alpha0=alpha0, random_state=7)
    X0 = sp.csr_matrix(data.X)
    order = np.random.default_rng(11).permutation(n_docs)  # which documents are emptied first
    rows = []
    for s in SHARES:
        emptied = order[:int(round((1.0 - s) * n_docs))]
        keep = np.setdiff1d(np.arange(n_docs), emptied)
        X = X0.tolil(copy=True)
        for i in emptied:
            X.rows[i], X.data[i] = [], []
        X = sp.csr_matrix(X)
        usable_only = recovery_error(SpectralLDA(k, alpha0, random_state=0).fit(X0[keep]).topic_word_,
                                     data.topic_word)
        topics, alpha = _zero_unit_fit(X, n_docs, k, alpha0)
        row = {"s": s, "usable_only": usable_only, "zero_units_no_noise": recovery_error(topics, data.topic_word),
               "alpha_sum_zero_units": float(alpha.sum())}
        for eps in (1000.0, 3.0):
            errs = []
            for seed in range(seeds):
                try:
                    m = DPSpectralMoments(k, alpha0, 1, epsilon=eps, delta=delta, random_state=1000 + seed, unit="document",
                                   n_units=n_docs, strict=False).fit(X)
                    errs.append(recovery_error(m.topic_word_, data.topic_word))
                except PreconditionError:
                    errs.append(float("inf"))
            row[f"eps_{eps:g}"] = statistics.median(errs)
            row[f"eps_{eps:g}_range"] = (min(errs), max(errs))
        # (e) what no correction can beat: the usable documents alone with U public (the old, leaking calibration)
        errs = [recovery_error(DPSpectralMoments(k, alpha0, 1, epsilon=3.0, delta=delta, random_state=1000 + seed, unit="document",
                                          strict=False).fit(X0[keep]).topic_word_, data.topic_word)
                for seed in range(seeds)]
        row["eps_3_usable_public_U"] = statistics.median(errs)
        rows.append(row)
        print(f"s = {s:<5g} usable-only {usable_only:.4f}  zero units, no noise {row['zero_units_no_noise']:.4f} "
              f"(alpha sum {row['alpha_sum_zero_units']:.3f})  eps 1000 {row['eps_1000']:.4f}  "
              f"eps 3 {row['eps_3']:.4f} [{row['eps_3_range'][0]:.3f}, {row['eps_3_range'][1]:.3f}]  "
              f"eps 3, U public {row['eps_3_usable_public_U']:.4f}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("shares", "synthetic"))
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--docs", type=int, default=50_000)
    parser.add_argument("--words", type=int, default=100)
    parser.add_argument("--topics", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    if args.mode == "shares":
        shares(args.data)
    else:
        synthetic(args.docs, args.words, args.topics, args.seeds)


if __name__ == "__main__":
    main()
