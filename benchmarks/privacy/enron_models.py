"""TopicDP on the Enron sent-mail corpus: four models at epsilon = 3, delta = 1e-4, gamma = 0.1, full h.

    OPENBLAS_NUM_THREADS=1 python benchmarks/privacy/enron_models.py [--max-docs-per-user 50] [--models gensim-lda,...]
        [--n-jobs 2] [--out enron_models.json]

For each model prints: one-fit time, Delta_s, sigma, L1 and RMSE of the noisy matrix against the non-private
one (full K x V, and the 10 x 10 block of each topic's 10 top non-private words: TopicDP's setting), and
the wall time of the 2h fits. Needs ../shared/data/enron_sent (skips otherwise).
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from topicdp import Corpus, TopicDP, make_model
from topicdp.samplers import PRIVATE_ORACLE, SensitivitySampling
from topicdp.metrics import l1_distance, rmse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import ENRON as PATH  # noqa: E402


def top_block(W_noisy, W, n=10):
    """TopicDP's m x n view: each topic's n heaviest non-private words (columns may differ by topic)."""
    cols = np.argsort(-W, axis=1)[:, :n]
    return np.take_along_axis(W_noisy, cols, 1), np.take_along_axis(W, cols, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="gensim-lda,gensim-hdp,gensim-lsi,sklearn-lda")
    ap.add_argument("--max-docs-per-user", type=int, default=50)
    ap.add_argument("--max-tokens-per-doc", type=int, default=500)
    ap.add_argument("--max-features", type=int, default=2000)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--gamma", type=float, default=0.1)
    ap.add_argument("--users", type=int, default=None, help="use only the first N users of the file (documented subset)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if not PATH.exists():
        print("skipped: ../shared/data/enron_sent is absent")
        return 0
    corpus = Corpus.from_jsonl(PATH, min_df=5, max_df=0.5, max_features=args.max_features)
    if args.users is not None:
        corpus = corpus.subset_users(range(args.users))  # the first N users in file order
    corpus = corpus.bound(args.max_docs_per_user, args.max_tokens_per_doc, random_state=0)  # reproducible timings
    print(corpus, corpus.log.lines(), flush=True)
    rows = []
    for name in args.models.split(","):
        model = make_model(name, 10, 0)
        t = time.perf_counter()
        model.fit_topic_word(corpus)
        one_fit = time.perf_counter() - t
        t = time.perf_counter()
        # the measured runs resampled the private corpus (TopicDP's choice), now an explicit opt-in
        rel = TopicDP(model, epsilon=3.0, delta=1e-4, unit="user", n_jobs=args.n_jobs,
                      sampling=SensitivitySampling(PRIVATE_ORACLE, args.gamma, random_state=0)).fit(
            corpus, keep_nonprivate=True).release_
        wall = time.perf_counter() - t
        nb, wb = top_block(rel.noisy, rel.nonprivate)
        row = {
            "model": name, "one_fit_s": one_fit, "wall_s": wall, "h": rel.report.details["sensitivity_sample"]["h"],
            "delta_s": rel.report.sensitivity, "sigma": rel.report.sigma,
            "L1_full": l1_distance(rel.noisy, rel.nonprivate), "RMSE_full": rmse(rel.noisy, rel.nonprivate),
            "L1_10x10": l1_distance(nb, wb), "RMSE_10x10": rmse(nb, wb),
            "sampler_median_pair_s": rel.diagnostics["sensitivity_sample"]["seconds_per_pair_median"],
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"corpus": repr(corpus), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
