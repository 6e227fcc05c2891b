"""Does the stable form move the wrapped model away from the user's own? The noiseless stable f of a wrapped
scikit-learn LDA (from the user's model as given, seed 0, fitted on P), with and without the per-user weight, and
from the toolkit's VariationalLDA fitted on P instead, against the user's own fits (seeds 0-2).

The split and corpora of ``wrap_your_model.py`` (the private corpus bounded to 20 posts a user, seeded 0); P's words.

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/wrap_weight_noiseless.py

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups

from utility.wrap_your_model import DATA, seeded_corpora, split, topics_of, users_model  # noqa: E402


def main(argv=None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)  # --help, and nothing else
    path = DATA / "blogs" / "blogs.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} not found")
        return 0
    from sklearn.base import clone
    from sklearn.decomposition import LatentDirichletAllocation

    from topicdp.adapters.wrap import wrap_model
    from topicdp.metrics.readability import topic_overlap
    from topicdp.forecast import public_init

    P, corpus = seeded_corpora(split(path, 1.0))
    own = {seed: topics_of(users_model(corpus, "sklearn", seed)) for seed in (0, 1, 2)}
    weighted = wrap_model(LatentDirichletAllocation(n_components=10, random_state=0), reference=P,
                          vocabulary=corpus.vocabulary, bounds=corpus.bounds).spec
    variational_on_p = public_init(P, 10, unit="user", random_state=0)
    for name, spec in (("with the weight", weighted), ("without", clone(weighted).set_params(max_user_norm=None)),
                       ("with the weight, from VariationalLDA on P", clone(weighted).set_params(init=variational_on_p))):
        W = spec.fit_topic_word(corpus)
        print(f"stable f {name}: overlap with the user's fits seeded 0, 1, 2:",
              [round(float(topic_overlap(W, own[s])), 2) for s in own])
    print("the user's fit seeded 0 against seeds 1 and 2:",
          [round(float(topic_overlap(own[s], own[0])), 2) for s in (1, 2)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
