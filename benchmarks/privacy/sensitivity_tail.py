"""Which neighbouring pairs make the tail of a sampled sensitivity: each pair's distance beside the token counts of
the two users it swaps.

The split, P and the private corpus of ``wrap_your_model.py`` (the private corpus bounded to 20 posts per user,
seeded 0), the scikit-learn (or gensim, ``--model``) LDA a user has, wrapped as TopicDP wraps it, and ``--pairs``
neighbouring pairs drawn as the sampler draws them (P cut to the private corpus' bounds; seed 0). For each cap in
``--caps`` (``none``: the stable form without its per-user weight; T: every corpus of the pair cut to T tokens per
user, seeded 0, inside f; ``docT``: every document cut to T tokens instead; ``weighted``: the stable form as TopicDP
wraps it, no user's word counts weighing more than P's median user's norm, nor their part of a topic more than that
norm times K times the topic's share; ``weighted-tokens``: the same with the weight the wrap used before, no user
weighing more than P's median user's tokens; ``norm-qQ``: ``weighted`` at the Q-quantile of P's users' norms;
``share-powerA``: ``weighted`` with each topic's cap shrinking as its share to the power A, not linearly) the
pairs' distances ||f(D) - f(D')||_F, their
quantiles, the largest pairs with the swapped users' token counts and the topic (row of f) that moved most, and the
correlation between a pair's distance and the larger swapped user's tokens.

``--users K`` measures chosen users instead of drawn pairs: in the first pair, the removed user is each of the K
users of P with the largest norm under the token weight (few words, repeated), then each of the K with the most
tokens, then each of the K with the most tokens under the norm weight, and the added user is P's median user (by
tokens).

    OPENBLAS_NUM_THREADS=1 python benchmarks/privacy/sensitivity_tail.py --pairs 24 --caps none,1732,doc500 \\
        --out /tmp/sensitivity_tail.json
    OPENBLAS_NUM_THREADS=1 python benchmarks/privacy/sensitivity_tail.py --users 3 --caps weighted-tokens,weighted
    OPENBLAS_NUM_THREADS=1 python benchmarks/privacy/sensitivity_tail.py --pairs 24 --caps none --model vem
    OPENBLAS_NUM_THREADS=1 python benchmarks/privacy/sensitivity_tail.py --pairs 40 --caps weighted --model gensim --n-jobs 1
    OPENBLAS_NUM_THREADS=1 python benchmarks/privacy/sensitivity_tail.py --pairs 61 --caps weighted --replay SEED
        # SEED: a wrap_your_model.py run's sample_seed; its sample's pairs, drawn again

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from functools import partial
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups

import numpy as np  # noqa: E402

from utility.wrap_your_model import DATA, seeded_corpora, split, users_model  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=24)
    parser.add_argument("--caps", default="none,1732",
                        help="comma-separated: none, T (tokens per user inside f), docT (tokens per document), "
                             "weighted (the wrap's per-user weight), weighted-tokens (the weight in tokens) or "
                             "norm-qQ (the wrap's weight at the Q-quantile of P's users' norms, not the median) or "
                             "share-powerA (each topic's cap shrinking as its share to the power A)")
    parser.add_argument("--users", type=int, default=0,
                        help="K: swap chosen users (the K of largest norm under the token weight, the K with the "
                             "most tokens, the K with the most tokens under the norm weight) for P's median user, "
                             "instead of drawn pairs")
    parser.add_argument("--replay", type=int, default=None, metavar="SEED",
                        help="draw the pairs of a sensitivity sample seeded SEED (a run's sample_seed) instead: "
                             "its first --pairs pairs, exactly as the sampler drew them")
    parser.add_argument("--model", choices=("sklearn", "gensim", "vem"), default="sklearn",
                        help="the user's model: scikit-learn's LDA or gensim's LdaModel (each weighs a user by "
                             "tokens) or the toolkit's user-level VariationalLDA (each user's statistic normalised)")
    parser.add_argument("--pick", default=None, metavar="I,J,...",
                        help="only these of the drawn pairs (0-based, in drawing order)")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--out", default=None, help="JSON of every pair's distance and swapped token counts")
    args = parser.parse_args(argv)
    path = DATA / "blogs" / "blogs.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} not found")
        return 0
    from joblib import Parallel, delayed
    from sklearn.base import clone
    from sklearn.decomposition import LatentDirichletAllocation

    from topicdp.adapters.wrap import wrap_model
    from topicdp.inference.estep import unit_norms
    from topicdp.samplers import SensitivitySampling
    from topicdp.samplers.sampler import draw_pairs
    from topicdp.variational import VariationalLDA

    P, corpus = seeded_corpora(split(path, 1.0))
    mine = (VariationalLDA(10, unit="user", random_state=0) if args.model == "vem"
            else users_model(corpus, "gensim", 0) if args.model == "gensim"
            else LatentDirichletAllocation(n_components=10, random_state=0))
    weighted = wrap_model(mine, reference=P, unit="user", vocabulary=corpus.vocabulary, bounds=corpus.bounds).spec
    # the caps measure the stable form as it was before the per-user weight; "weighted" is the wrap's own
    spec = clone(weighted).set_params(max_user_norm=None) if args.model != "vem" else weighted
    distribution = SensitivitySampling(P).records(corpus, "user")  # P cut to the private bounds, as the sampler does
    builder, B = distribution.pair_builder(), distribution.reference
    tokens = np.bincount(B.doc_users, weights=np.asarray(B.X.sum(axis=1)).ravel(), minlength=B.n_users)
    if args.replay is None:
        rng = np.random.default_rng(0)
        draws = [distribution.draw_indices(corpus.n_users, rng) for _ in range(args.pairs)]
    else:
        draws = draw_pairs(distribution, corpus.n_users, args.replay, args.pairs)
    if args.pick:
        draws = [draws[int(i)] for i in args.pick.split(",")]
    norms = unit_norms(B.X, B.doc_users, B.n_users)
    if args.users:
        token_weight = np.minimum(1.0, np.median(tokens) / np.maximum(tokens, 1.0))
        norm_weight = np.minimum(1.0, np.median(norms) / np.maximum(norms, 1.0))
        chosen = [*np.argsort(token_weight * norms)[::-1][:args.users],
                  *np.argsort(tokens)[::-1][:args.users],
                  *np.argsort(norm_weight * tokens)[::-1][:args.users]]
        median_user = int(np.argmin(np.abs(tokens - np.median(tokens))))
        d = draws[0][0]
        draws = [(np.r_[d[:-1], u], np.r_[d[:-1], median_user]) for u in chosen]

    specs = {"weighted": weighted}
    specs.update({cap: weighted for cap in args.caps.split(",") if cap.startswith("share-power")})
    if "weighted-tokens" in args.caps.split(","):
        specs["weighted-tokens"] = clone(weighted).set_params(max_user_norm=float(np.median(tokens)))
    for cap in args.caps.split(","):
        if cap.startswith("norm-q"):  # the weight at another quantile of P's users' norms than the median
            specs[cap] = clone(weighted).set_params(max_user_norm=float(np.quantile(norms, float(cap[6:]))))

    def distance(d, dp, cap):
        import topicdp.adapters.sklearn as adapter

        f, norm_weights = specs.get(cap, spec), adapter.user_norm_weights
        if cap == "weighted-tokens":  # the weight the wrap used before, for this pair only (restored below)
            adapter.user_norm_weights = _token_weights
        import topicdp.inference.estep as estep

        topic_weights = estep.user_topic_weights
        if cap.startswith("share-power"):  # each topic's cap max_user_norm * (K pi_k) ** power, for this pair only
            estep.user_topic_weights = partial(topic_weights, share_power=float(cap[11:]))
        try:
            pair = builder.pair(d, dp)  # D is valid until D' is asked for: fit D first
            W = f.fit_topic_word(_capped(next(pair), cap))
            rows = np.sum((W - f.fit_topic_word(_capped(next(pair), cap))) ** 2, axis=1)
            far = int(np.argmax(rows))  # the row that moved most: its share of the distance and its words
            words = " ".join(B.vocabulary[j] for j in np.argsort(-W[far])[:6])
            return float(np.sqrt(rows.sum())), float(rows[far] / rows.sum()), words
        finally:
            adapter.user_norm_weights = norm_weights
            estep.user_topic_weights = topic_weights

    quantiles = np.quantile(tokens, [.5, .9, .99, 1])
    out = {"tokens_removed": [float(tokens[d[-1]]) for d, _ in draws],
           "tokens_added": [float(tokens[dp[-1]]) for _, dp in draws],
           "norm_removed": [float(norms[d[-1]]) for d, _ in draws],
           "norm_added": [float(norms[dp[-1]]) for _, dp in draws],
           "users_removed_added": [[int(d[-1]), int(dp[-1])] for d, dp in draws],
           "p_tokens_per_user_quantiles": dict(zip(("median", "p90", "p99", "max"), quantiles.tolist()))}
    print("P's tokens per user after the private bounds (median, p90, p99, max):", quantiles.round().tolist())
    larger = np.maximum(out["tokens_removed"], out["tokens_added"])
    for cap in args.caps.split(","):
        T = None if cap == "none" else cap
        start = time.perf_counter()
        results = Parallel(n_jobs=args.n_jobs)(delayed(distance)(d, dp, T) for d, dp in draws)
        deltas = [r[0] for r in results]
        out[cap], out[f"{cap}_largest_row"] = deltas, [r[1:] for r in results]
        print(f"cap {cap}: {time.perf_counter() - start:.0f} s; distances min/median/p90/max",
              np.quantile(deltas, [0, .5, .9, 1]).round(5).tolist(),
              "; corr with the larger swapped user's tokens", round(float(np.corrcoef(deltas, larger)[0, 1]), 3))
        for i in (range(len(draws)) if args.users else np.argsort(deltas)[::-1][:3]):
            print(f"  {deltas[i]:.5f}: removes user {draws[i][0][-1]} of {out['tokens_removed'][i]:.0f} tokens (norm "
                  f"{out['norm_removed'][i]:.0f}), adds user {draws[i][1][-1]} of {out['tokens_added'][i]:.0f} "
                  f"(norm {out['norm_added'][i]:.0f}); {results[i][1]:.0%} of it in one topic ({results[i][2]} ...)")
        print("  the row that moved most holds (median over pairs)", f"{np.median([r[1] for r in results]):.0%}",
              "of a pair's squared distance")
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


def _token_weights(corpus, max_user_tokens: float) -> np.ndarray:
    """``min(1, max_user_tokens / n_u)`` per document, n_u its user's tokens: the per-user weight in tokens."""
    tokens = np.bincount(corpus.doc_users, weights=np.asarray(corpus.X.sum(axis=1)).ravel(), minlength=corpus.n_users)
    return np.minimum(1.0, max_user_tokens / np.maximum(tokens, 1.0))[corpus.doc_users]


def _capped(corpus, cap: str | None):
    if cap is None or cap.startswith(("weighted", "norm-q", "share-power")):
        return corpus
    if cap.startswith("doc"):
        return corpus.bound(random_state=0, max_tokens_per_doc=int(cap[3:]))
    return corpus.bound(random_state=0, max_tokens_per_user=int(cap))


if __name__ == "__main__":
    raise SystemExit(main())
