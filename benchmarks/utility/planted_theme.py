"""Does a release from public starting topics carry what only the private data has? A theme planted in the private
half of blogs, absent from the public half P, looked for in TopicDP's release over gensim LDA's stable f.

When P is a random half of the same bloggers, P's topics alone (no private data, nothing released about it) already
score as well as the release on held-out NPMI, contrast and overlap with a non-private LDA: those scores cannot show
that the private data was used. This benchmark can. A fraction of the private users (``--fraction``, default 10%;
seed 0) each get five extra posts of
60 words drawn uniformly from a theme's words of the vocabulary (``--theme``, one or more of
:data:`topicdp.datasets.THEMES` joined by "+"). The starting topics are fitted on P (:func:`topicdp.forecast.public_init`),
which has no such posts; gensim's stable f (:class:`topicdp.adapters.GensimLDA` with ``init``) runs ``passes``
batch passes on the planted private half; TopicDP releases it at epsilon 3 and 10 (two noise draws each) with the
Delta_s that the Lambert-W sampler drew over P for that number of passes (``--delta-s PASSES=VALUE``; the sampler
only sees P, which planting does not change, so those are the values the release would use:
``docs/results/stable_starts_blogs_lambertw.md``). Printed: the largest share of the planted words (at most 10) in
any one topic's top 10 words, for the start alone, the noiseless f and each release. Random DP with respect to P,
NOT DP. Run::

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/utility/planted_theme.py --theme cooking+gardening

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import SHARED as DATA  # noqa: E402
#: Delta_s of gensim's stable f on blogs at the Lambert-W sizing, gamma 0.2 (benchmarks/utility/stable_starts.py)
SAMPLED = {2: 0.001752, 3: 0.002124, 5: 0.002495, 10: 0.003701}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--theme", default="cooking+gardening")
    ap.add_argument("--fraction", type=float, default=0.1, help="the share of private users given planted posts")
    ap.add_argument("--delta-s", action="append", default=[], metavar="PASSES=VALUE",
                    help="a number of passes and its sampled Delta_s (default: the blogs figures in SAMPLED)")
    args = ap.parse_args()
    path = DATA / "blogs" / "blogs.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} is absent")
        return 0

    import numpy as np

    from utility.stable_starts import halves  # the split whose P the Delta_s were sampled over
    from topicdp import Corpus, RepeatedReleaseWarning, TopicDP, make_model
    from topicdp.datasets import THEMES
    from topicdp.samplers import SensitivitySampling
    from topicdp.samplers.sampler import SensitivitySample
    from topicdp.samplers.sizing import sample_size
    from topicdp.forecast import public_init

    # every release here is one measurement of utility at a given sigma; none is published
    warnings.simplefilter("ignore", RepeatedReleaseWarning)

    sampled = {int(p): float(v) for p, v in (s.split("=") for s in args.delta_s)} or SAMPLED
    private, public, words = halves(path)
    vocab = set(words)
    planted = [w for name in args.theme.split("+") for w in THEMES[name].split() if w in vocab]
    rng = np.random.default_rng(0)
    users = sorted({u for _, u in private})
    chosen = sorted(rng.choice(users, size=max(1, round(args.fraction * len(users))), replace=False).tolist())
    extra = [(" ".join(rng.choice(planted, size=60)), u) for u in chosen for _ in range(5)]
    texts = private + extra
    # 25 posts per user so that the five planted posts are not what the cap cuts (P keeps the benchmark's 20)
    corpus = Corpus.from_texts([t for t, _ in texts], [u for _, u in texts], vocabulary=words).bound(25, 500, 0)
    reference = Corpus.from_texts([t for t, _ in public], [u for _, u in public], vocabulary=words).bound(20, 500, 0)
    print(f"planted: {len(planted)} words of {args.theme!r} in the vocabulary ({' '.join(planted)}), 5 posts of 60 "
          f"words for each of {len(chosen)} of {len(users)} private users")
    ids = {words.index(w) for w in planted}

    def found(M) -> float:
        """The largest share of the planted words in one topic's top 10."""
        return max(len(ids & set(np.argsort(-row)[:10].tolist())) for row in np.asarray(M)) / min(10, len(ids))

    start = public_init(reference, 10, unit="user")
    print(f"P's topics alone (the start; nothing private): {found(start):.1f}")
    rho, h, k = sample_size(0.2, "lambert-w")
    sampling = SensitivitySampling(reference, 0.2, "lambert-w", random_state=0)
    print("| passes | Delta_s | noiseless f | epsilon 3 (2 draws) | epsilon 10 (2 draws) |\n|---|---|---|---|---|")
    for passes, delta_s in sorted(sampled.items()):
        model = make_model("gensim-lda", 10, 0, init=start, passes=passes)
        W = model.fit_topic_word(corpus)
        sample = SensitivitySample(sensitivity=delta_s, deltas=[delta_s] * h, gamma=0.2, rho=rho, h=h, k=k,
                                   sufficient=True, distribution={"kind": "public-reference"}, seed=0)
        shares = {eps: [found(TopicDP(model, epsilon=eps, delta=1e-6, unit="user", sampling=sampling,
                                      random_state=np.random.default_rng(seed)).fit(
            corpus, sensitivity_sample=sample, topic_word=W).release_.topic_word) for seed in (0, 1)]
            for eps in (3.0, 10.0)}
        print(f"| {passes} | {delta_s:.4g} | {found(W):.1f} | " + " | ".join(
            ", ".join(f"{v:.1f}" for v in shares[eps]) for eps in (3.0, 10.0)) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
