"""Would a simulation on P, from public facts alone, have foreseen a sampled release's readability?

For each run of ``wrap_your_model.py`` given (its JSON: the user's model and the sigma its sample set), the
stable form's public start is fitted again on P (the user's model as given, fitted on P's counts: public), and
``--draws`` simulated releases are made from it as TopicDP makes a release from f(D): Gaussian noise of that sigma on
every entry, negatives clipped, rows renormalised. Each is scored on P's own text against the noiseless start (NPMI
and NPMI contrast ratios, diversity, top-10 overlap), and printed beside what the run measured on held-out private
users against the owner's LDA. Nothing private is read: the private corpus gives only its bounds and word list
(P's), as the sampler uses them. The question is whether the simulated contrast calls a release of common words
what it is where its overlap alone would not.

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/sampled_forecast.py docs/results/wrap_your_model_*.json

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups

import numpy as np  # noqa: E402

from utility.wrap_your_model import DATA, seeded_corpora, split  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="wrap_your_model.py JSONs (scikit-learn or gensim, user level)")
    parser.add_argument("--draws", type=int, default=9)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    path = DATA / "blogs" / "blogs.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} not found")
        return 0
    from topicdp.adapters.wrap import wrap_model
    from topicdp.mechanisms.postprocess import to_simplex
    from topicdp.metrics.readability import _contrast, topic_diversity, topic_overlap

    runs = [(p, json.loads(Path(p).read_text())) for p in args.runs]
    P, corpus = seeded_corpora(split(path, 1.0))
    starts: dict[str, np.ndarray] = {}
    rows = []
    for name, run in runs:
        kind = run["model"]
        if kind not in starts:  # the public start only: an unfitted model carries the user's configuration
            wrapped = wrap_model(_unfitted(kind, P), reference=P, unit="user", vocabulary=corpus.vocabulary,
                                 bounds=corpus.bounds)
            start = np.asarray(wrapped.spec.get_params()["init"], dtype=float)
            starts[kind] = start / start.sum(axis=1, keepdims=True)
        S = starts[kind]
        base = _contrast(S, P, None, 10)
        draws = []
        for seed in range(args.draws):
            W, _ = to_simplex(S + np.random.default_rng(seed).normal(0.0, run["sigma"], S.shape), "clip")
            ours = _contrast(W, P, None, 10)
            draws.append({"npmi": ours["npmi"] / base["npmi"], "contrast": ours["contrast"] / base["contrast"],
                          "diversity": topic_diversity(W), "overlap": float(topic_overlap(W, S))})
        simulated = {k: float(np.median([d[k] for d in draws])) for k in draws[0]}
        measured = run.get("noise_draws", {}).get("median") or run["scores_vs_ordinary_lda"]
        rows.append({"run": Path(name).name, "model": kind, "sigma": run["sigma"], "simulated_on_P": simulated,
                     "simulated_contrast_range": [min(d["contrast"] for d in draws),
                                                  max(d["contrast"] for d in draws)],
                     "measured": {k: measured[k] for k in ("npmi", "contrast", "diversity", "overlap")}})
        s, m = simulated, rows[-1]["measured"]
        print(f"{rows[-1]['run']}: sigma {run['sigma']:.4f}; simulated on P: NPMI {s['npmi']:.2f}x, contrast "
              f"{s['contrast']:.2f}x, diversity {s['diversity']:.2f}, overlap with the start {s['overlap']:.2f}; "
              f"measured: NPMI {m['npmi']:.2f}x, contrast {m['contrast']:.2f}x, diversity {m['diversity']:.2f}, "
              f"overlap {m['overlap']:.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def _unfitted(kind: str, P):
    """The user's model as the wrap reads it (its configuration; an unfitted object, so no private fit is made)."""
    if kind == "gensim":
        from gensim.models import LdaModel

        dictionary, _ = P.to_gensim()
        return LdaModel(id2word=dictionary, num_topics=10, random_state=0)
    from sklearn.decomposition import LatentDirichletAllocation

    return LatentDirichletAllocation(n_components=10, random_state=0)


if __name__ == "__main__":
    raise SystemExit(main())
