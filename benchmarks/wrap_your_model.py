"""A new user's script, run as written: TopicDP over the scikit-learn LDA they already use (fitted), on blog posts.

The blog corpus' users are split by a hash of their id into a private half and a public half P (the split of
:func:`stable_starts.halves`); both are written as JSON Lines (fields ``text``, ``user``) to a private scratch
directory, and the user's script reads them with ``Corpus.from_jsonl``. The script's only departure: the sampler uses
the exchangeable sizing at gamma 0.1 (9 neighbouring pairs; random DP with respect to P, NOT DP) to keep the run short.

Measured: the release's matched top-10 overlap with the user's own non-private fit
(:func:`topicdp.metrics.readability.topic_overlap`), next to the overlap between two fits of the same estimator with
seeds 0 and 1 (how far the non-private model itself moves); the release's wall time against one non-private fit.
``--fraction f`` keeps that fraction of each half's users (the same hash: a user is kept iff its hash lies in the
first f of its half's range).

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/wrap_your_model.py --fraction 0.2

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def write_halves(path: Path, out: Path, fraction: float) -> tuple[int, int]:
    """public.jsonl.gz and private.jsonl.gz under ``out``; returns the numbers of private and public records."""
    from stable_starts import halves

    from topicdp.pipeline import user_selected

    private, public, _ = halves(path)
    if fraction < 1.0:  # private users hash below 0.5, public ones above: keep the first `fraction` of each range
        private = [(t, u) for t, u in private if user_selected(u, 0.5 * fraction)]
        public = [(t, u) for t, u in public if user_selected(u, 0.5 + 0.5 * fraction)]
    for name, records in (("private", private), ("public", public)):
        with gzip.open(out / f"{name}.jsonl.gz", "wt", encoding="utf-8") as f:
            for text, user in records:
                f.write(json.dumps({"text": text, "user": user}) + "\n")
    return len(private), len(public)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fraction", type=float, default=1.0, help="fraction of each half's users (default 1)")
    parser.add_argument("--out", default="docs/results/wrap_your_model.json", help="JSON of the measurements")
    args = parser.parse_args(argv)
    path = DATA / "blogs" / "blogs.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} not found")
        return 0
    import numpy as np

    out = Path(args.out).resolve()
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chmod(scratch, 0o700)  # private texts
        n_private, n_public = write_halves(path, Path(scratch), args.fraction)
        os.chdir(scratch)
        # ---- the user's script, as written (only the sampler's sizing and gamma differ) ----
        from sklearn.decomposition import LatentDirichletAllocation

        from topicdp import Corpus, TopicDP
        from topicdp.samplers import SensitivitySampling

        P = Corpus.from_jsonl("public.jsonl.gz", max_features=2000)
        corpus = Corpus.from_jsonl("private.jsonl.gz", vocabulary=P.vocabulary).bound(max_docs_per_user=20)
        start = time.perf_counter()
        mine = LatentDirichletAllocation(n_components=10, random_state=0).fit(corpus.X)  # the model I already use
        fit_seconds = time.perf_counter() - start
        dp = TopicDP(mine, epsilon=3.0, unit="user",
                     sampling=SensitivitySampling(distribution=P, gamma=0.1, sizing="exchangeable"))
        start = time.perf_counter()
        release = dp.fit(corpus).release_
        release_seconds = time.perf_counter() - start
        print(release.report.summary())
        release.save("release.json")
        # ---- the measurements ----
        from topicdp.metrics.readability import topic_overlap

        other = LatentDirichletAllocation(n_components=10, random_state=1).fit(corpus.X)
        own = mine.components_ / mine.components_.sum(axis=1, keepdims=True)
        seed1 = other.components_ / other.components_.sum(axis=1, keepdims=True)
        result = {
            "fraction": args.fraction, "private_records": n_private, "public_records": n_public,
            "private_docs_after_bounding": corpus.n_docs, "private_users": corpus.n_users, "public_docs": P.n_docs,
            "changes": dp.model_changes_,
            "overlap_release_vs_own_fit": float(topic_overlap(release.topic_word, own)),
            "overlap_seed0_vs_seed1": float(topic_overlap(seed1, own)),
            "overlap_release_vs_seed1": float(topic_overlap(release.topic_word, seed1)),
            "nonprivate_fit_seconds": fit_seconds, "release_seconds": release_seconds,
            "sensitivity": float(release.report.sensitivity), "sigma": float(release.report.sigma),
            "release_top_words": [[P.vocabulary[j] for j in np.argsort(-row)[:10]] for row in release.topic_word],
            "own_top_words": [[P.vocabulary[j] for j in np.argsort(-row)[:10]] for row in own],
        }
        os.chdir(here)
    print(json.dumps({k: v for k, v in result.items() if "top_words" not in k}, indent=1))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
