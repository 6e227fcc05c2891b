"""A new user's script, run as written: TopicDP over the scikit-learn LDA they already use (fitted), on blog posts.

The blog corpus' users are split by a hash of their id (:func:`topicdp.corpus.user_selected`): below 0.45 the private
corpus, 0.45-0.5 held-out users of the private side (scored on, never released), 0.5 and above the public half P. The
private corpus and P are written as JSON Lines (fields ``text``, ``user``) to a private scratch directory, and the
user's script reads them with ``Corpus.from_jsonl``, exactly as written; the sampler's sizing and gamma are the
options (``--sizing lambert-w --gamma 0.2``, the script's, or ``--sizing exchangeable --gamma 0.1``). The release is
random DP with respect to P, NOT DP (its report says so).

Measured:

* the release's top-10 lists against the owner's non-private model on an ordinary vocabulary (gensim LDA, 5 passes,
  on the private texts' own 5,000 most frequent words, min_df 5, max_df 0.5: what the owner fits without privacy),
  scored on the held-out users' posts (``decision_validation.score_lists``: NPMI and contrast relative to the LDA's,
  diversity, matched top-10 overlap), each the median over the owner's LDA fitted with seeds 0..``--lda-seeds``-1
  (one fit's contrast moves 2-3x between seeds; ``--rescore JSON`` scores an earlier run's lists so);
* the release's top-10 overlap with the user's own non-private fit (seed 0), beside the overlaps between that fit and
  fits of the same estimator with seeds 1..``--seed-pairs`` (how far the non-private model itself moves);
* the release's wall time against one non-private fit of the user's model.

``--model gensim`` runs the same script with a gensim ``LdaModel(corpus=..., id2word=..., num_topics=10)`` the user
fitted instead, ``--model vem`` with the toolkit's user-level ``VariationalLDA`` (a user's weight does not grow with
their tokens). ``--fraction f`` keeps that fraction of each side's users (the same hash: a user is kept iff its hash lies in the
first f of its side's range); ``--public-fraction f`` keeps that fraction of P's users alone (the private side as
``--fraction`` says): the recipe by the size of P.

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/wrap_your_model.py --sizing exchangeable --gamma 0.1 \\
        --out docs/results/wrap_your_model_exchangeable.json

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
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups

import numpy as np  # noqa: E402  (after the BLAS thread pin)

from _data import SHARED as DATA  # noqa: E402
PRIVATE_BELOW, HELDOUT_BELOW = 0.45, 0.5


def split(path: Path, fraction: float, public_fraction: float | None = None) -> dict[str, list]:
    """(text, user) records of the private corpus, the private side's held-out users and P (``public_fraction`` of
    P's users when given, else ``fraction``)."""
    from topicdp.corpus import read_jsonl_records, user_selected

    def side(user) -> str:
        if not user_selected(user, HELDOUT_BELOW):
            return "public"
        return "private" if user_selected(user, PRIVATE_BELOW) else "heldout"

    def kept(user, name: str) -> bool:  # the first `fraction` of the side's hash range
        low, high = {"private": (0.0, PRIVATE_BELOW), "heldout": (PRIVATE_BELOW, HELDOUT_BELOW),
                     "public": (HELDOUT_BELOW, 1.0)}[name]
        share = public_fraction if name == "public" and public_fraction is not None else fraction
        return share >= 1.0 or user_selected(user, low + (high - low) * share)

    out: dict[str, list] = {"private": [], "heldout": [], "public": []}
    for text, user in read_jsonl_records(path):
        name = side(user)
        if kept(user, name):
            out[name].append((text, user))
    return out


def seeded_corpora(parts: dict):
    """P (its 2,000 most frequent words) and the private corpus on P's words, bounded to 20 posts a user with seed
    0: the script's corpora, reproducible (the script's own bound is unseeded)."""
    from topicdp import Corpus

    P = Corpus.from_texts([t for t, _ in parts["public"]], [u for _, u in parts["public"]], max_features=2000)
    corpus = Corpus.from_texts([t for t, _ in parts["private"]], [u for _, u in parts["private"]],
                               vocabulary=P.vocabulary).bound(max_docs_per_user=20, random_state=0)
    return P, corpus


def write(records: list, path: Path) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for text, user in records:
            f.write(json.dumps({"text": text, "user": user}) + "\n")


def owner_ldas(parts: dict, lda_seeds: int) -> list[list[list[str]]]:
    """The top-10 lists of the owner's non-private LDA on an ordinary vocabulary (module docstring), fitted on the
    private texts with seeds 0..``lda_seeds``-1."""
    from topicdp import Corpus
    from topicdp.topics import reference_lda

    texts, users = [t for t, _ in parts["private"]], [u for _, u in parts["private"]]
    ordinary = Corpus.from_texts(texts, users, min_df=5, max_df=0.5, max_features=5000)
    return [[[ordinary.vocabulary[j] for j in np.argsort(-row, kind="stable")[:10]] for row in
             reference_lda(ordinary, 10, passes=5, random_state=seed)] for seed in range(lda_seeds)]


def score_on_heldout(parts: dict, ours: list[list[str]], ldas: list[list[list[str]]]) -> dict:
    """The release's top-10 lists against each of the owner's LDAs on the held-out users, each measure the median
    over them (``decision_validation.score_against``)."""
    from utility.decision_validation import score_against

    from topicdp import Corpus

    words = sorted({w for rows in (ours, *ldas) for row in rows for w in row})
    heldout = Corpus.from_texts([t for t, _ in parts["heldout"]], [u for _, u in parts["heldout"]], vocabulary=words)
    return score_against(ours, ldas, heldout)


def rescore(paths: list[Path], lda_seeds: int) -> int:
    """Score measured releases again (their recorded top-10 lists) against ``lda_seeds`` fits of the owner's LDA,
    fitted once for every file of the same ``--fraction``."""
    results = [json.loads(path.read_text()) for path in paths]
    fitted: dict = {}
    for path, result in zip(paths, results):
        key = result["fraction"], result.get("public_fraction")
        if key not in fitted:
            parts = split(DATA / "blogs" / "blogs.jsonl.gz", *key)
            fitted[key] = parts, owner_ldas(parts, lda_seeds)
        parts, ldas = fitted[key]
        ours = [row.split() for row in result["release_top_words"]]
        result["scores_vs_ordinary_lda"] = score_on_heldout(parts, ours, ldas)
        result["lda_seeds"], result["lda_top_words"] = lda_seeds, [" ".join(r) for r in ldas[0]]
        print(path, json.dumps(result["scores_vs_ordinary_lda"], indent=1))
        path.write_text(json.dumps(result, indent=1) + "\n")
    return 0


def noise_draws(paths: list[Path], draws: int, lda_seeds: int, seed_pairs: int) -> int:
    """Score ``draws`` noise draws at the sensitivity each earlier scikit-learn or gensim run recorded (one run's
    release is one draw; its sensitivity sample is one more random quantity, and this separates the two). f is the
    stable form as the code builds it now: a run made with an earlier stable form is drawn at its sigma around
    today's f.

    The script's split and files, the private corpus bounded with seed 0 (the script's bound is unseeded), the
    user's model wrapped as the run recorded it (with the per-user weight or without, as its ``changes`` say), f
    fitted once, then TopicDP's release from that fit (``topic_word=``) with the run's Delta_s standing for its
    sample (only Delta_s sets sigma), noise seeded 1..``draws``. Each draw's lists are scored as the script scores
    them; each measure's median over the draws, with its range, is added to the run's JSON as ``noise_draws``.
    """
    from sklearn.base import clone

    from topicdp import PrivacyLedger, TopicDP
    from topicdp.metrics.readability import topic_overlap
    from topicdp.samplers import SensitivitySample, SensitivitySampling
    from topicdp.samplers.sizing import sample_size

    splits: dict = {}
    fits: dict = {}
    owners: dict = {}
    for path in paths:
        run = json.loads(path.read_text())
        key = run["fraction"], run.get("public_fraction")
        if key not in splits:  # the run's split: its corpora and the owner's LDA fits on them
            parts = split(DATA / "blogs" / "blogs.jsonl.gz", *key)
            splits[key] = (parts, *seeded_corpora(parts), owner_ldas(parts, lda_seeds))
        parts, P, corpus, ldas = splits[key]
        kind, owner = run["model"], (run["model"], key)
        if owner not in owners:  # the user's own fit (seed 0), wrapped as the script wraps it, and its overlaps
            mine = users_model(corpus, kind, 0)  # with the fits of seeds 1..seed_pairs
            own = topics_of(mine)
            owners[owner] = mine, own, [float(topic_overlap(topics_of(users_model(corpus, kind, s)), own))
                                       for s in range(1, seed_pairs + 1)]
        mine, own, seeds = owners[owner]
        weighted = any(c.startswith("user weight") for c in run["changes"])
        sampling = SensitivitySampling(distribution=P, gamma=run["gamma"], sizing=run["sizing"])
        dp = TopicDP(mine, epsilon=3.0, unit="user", sampling=sampling)
        spec = dp._wrap(corpus).spec
        if not weighted:
            spec = clone(spec).set_params(max_user_norm=None)
        if (owner, weighted) not in fits:
            fits[owner, weighted] = spec.fit_topic_word(corpus)
        h = run["pairs"]
        sample = SensitivitySample(sensitivity=run["sensitivity"], deltas=[run["sensitivity"]] * h, gamma=run["gamma"],
                                   rho=sample_size(run["gamma"], run["sizing"])[0], h=h, k=h, sufficient=True,
                                   distribution={"kind": "public-reference"}, seed=0, sizing=run["sizing"])
        rows = []
        for draw in range(1, draws + 1):
            release = clone(dp).set_params(model=spec, random_state=draw).fit(
                corpus, ledger=PrivacyLedger(), topic_word=fits[owner, weighted], sensitivity_sample=sample).release_
            assert abs(release.report.sigma - run["sigma"]) < 1e-9 * run["sigma"]  # the run's noise scale
            ours = [[release.vocabulary[j] for j in np.argsort(-row, kind="stable")[:10]] for row in release.topic_word]
            scores = score_on_heldout(parts, ours, ldas)
            scores["own_fit_ratio"] = float(topic_overlap(release.topic_word, own)) / float(np.median(seeds))
            rows.append(scores)
            print(path.name, draw, json.dumps({k: round(v, 3) for k, v in scores.items()}), flush=True)
        run["noise_draws"] = {
            "draws": draws, "sigma": run["sigma"], "private_corpus": "bounded with seed 0",
            "per_draw": rows, "own_fit_vs_seeds": seeds,
            "median": {k: float(np.median([r[k] for r in rows])) for k in rows[0]},
            "min": {k: float(np.min([r[k] for r in rows])) for k in rows[0]},
            "max": {k: float(np.max([r[k] for r in rows])) for k in rows[0]},
            "meets_targets": sum(r["npmi"] >= 0.8 and r["contrast"] >= 0.5 and r["diversity"] >= 0.5
                                 and r["overlap"] >= 0.35 and r["own_fit_ratio"] >= 0.75 for r in rows)}
        print(path.name, "median", json.dumps(run["noise_draws"]["median"]), "meets", run["noise_draws"]["meets_targets"])
        path.write_text(json.dumps(run, indent=1) + "\n")
    return 0


def users_model(corpus, kind: str, seed: int):
    """The model the user already uses, fitted by them on the private corpus with their seed: scikit-learn's LDA,
    gensim's LdaModel (each with its library's defaults) or the toolkit's user-level VariationalLDA; 10 topics."""
    if kind == "vem":  # the toolkit's user-level LDA: each user's statistic normalised, not weighed by tokens
        from topicdp import VariationalLDA

        return VariationalLDA(10, unit="user", random_state=seed).fit(corpus)
    if kind == "gensim":
        from gensim.models import LdaModel

        dictionary, bow = corpus.to_gensim()
        return LdaModel(corpus=bow, id2word=dictionary, num_topics=10, random_state=seed)
    from sklearn.decomposition import LatentDirichletAllocation

    return LatentDirichletAllocation(n_components=10, random_state=seed).fit(corpus.X)


def topics_of(model):
    """The fitted model's (K, V) topic-word matrix, rows normalised."""
    W = (model.topic_word_ if hasattr(model, "topic_word_") else model.get_topics() if hasattr(model, "get_topics")
         else model.components_)
    return W / W.sum(axis=1, keepdims=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fraction", type=float, default=1.0, help="fraction of each side's users (default 1)")
    parser.add_argument("--public-fraction", type=float, default=None,
                        help="fraction of P's users alone (default: --fraction); the private side keeps --fraction")
    parser.add_argument("--sizing", choices=("lambert-w", "exchangeable"), default="lambert-w")
    parser.add_argument("--gamma", type=float, default=0.2)
    parser.add_argument("--seed-pairs", type=int, default=5, help="fits with seeds 1..N beside the user's seed 0")
    parser.add_argument("--model", choices=("sklearn", "gensim", "vem"), default="sklearn",
                        help="the user's model: scikit-learn's LatentDirichletAllocation, gensim's LdaModel or "
                             "the toolkit's user-level VariationalLDA")
    parser.add_argument("--n-jobs", type=int, default=1,
                        help="the sampler's parallel fits (TopicDP's n_jobs; 1, as in the script)")
    parser.add_argument("--lda-seeds", type=int, default=3, help="fits of the owner's LDA scored against (medians)")
    parser.add_argument("--rescore", nargs="+", default=None, metavar="JSON",
                        help="only score these earlier runs' releases again (against --lda-seeds fits)")
    parser.add_argument("--draws", type=int, default=0,
                        help="with --at: noise draws to score at each earlier run's recorded sensitivity")
    parser.add_argument("--at", nargs="+", default=None, metavar="JSON",
                        help="earlier scikit-learn or gensim runs whose sigma --draws reuses (their JSON gains "
                             "noise_draws)")
    parser.add_argument("--out", default="docs/results/wrap_your_model.json", help="JSON of the measurements")
    args = parser.parse_args(argv)
    path = DATA / "blogs" / "blogs.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} not found")
        return 0
    if args.rescore:
        return rescore([Path(p) for p in args.rescore], args.lda_seeds)
    if args.at:
        return noise_draws([Path(p) for p in args.at], args.draws, args.lda_seeds, args.seed_pairs)
    out = Path(args.out).resolve()
    here = os.getcwd()
    parts = split(path, args.fraction, args.public_fraction)
    with tempfile.TemporaryDirectory() as scratch:
        os.chmod(scratch, 0o700)  # private texts
        write(parts["private"], Path(scratch) / "private.jsonl.gz")
        write(parts["public"], Path(scratch) / "public.jsonl.gz")
        os.chdir(scratch)
        # ---- the user's script, as written (the sampler's sizing and gamma are this run's options) ----
        from topicdp import Corpus, TopicDP
        from topicdp.samplers import SensitivitySampling

        P = Corpus.from_jsonl("public.jsonl.gz", max_features=2000)
        corpus = Corpus.from_jsonl("private.jsonl.gz", vocabulary=P.vocabulary).bound(max_docs_per_user=20)
        start = time.perf_counter()
        mine = users_model(corpus, args.model, 0)  # the model I already use
        fit_seconds = time.perf_counter() - start
        dp = TopicDP(mine, epsilon=3.0, unit="user",
                     sampling=SensitivitySampling(distribution=P, gamma=args.gamma, sizing=args.sizing),
                     n_jobs=args.n_jobs)
        start = time.perf_counter()
        release = dp.fit(corpus).release_
        release_seconds = time.perf_counter() - start
        print(release.report.summary(), flush=True)
        release.save("release.json")
        os.chdir(here)
    # ---- the measurements ----
    from topicdp.metrics.readability import topic_overlap

    def lists(W, words):
        return [[words[j] for j in np.argsort(-row, kind="stable")[:10]] for row in np.asarray(W)]

    own = topics_of(mine)
    seed_overlaps = [float(topic_overlap(topics_of(users_model(corpus, args.model, s)), own))
                     for s in range(1, args.seed_pairs + 1)]
    ours = lists(release.topic_word, list(release.vocabulary))
    ldas = owner_ldas(parts, args.lda_seeds)
    scores = score_on_heldout(parts, ours, ldas)
    overlap_own = float(topic_overlap(release.topic_word, own))
    result = {
        "model": args.model, "fraction": args.fraction, "public_fraction": args.public_fraction, "sizing": args.sizing, "gamma": args.gamma,
        "records": {k: len(v) for k, v in parts.items()},
        "private_docs_after_bounding": corpus.n_docs, "private_users": corpus.n_users, "public_docs": P.n_docs,
        "changes": dp.model_changes_, "guarantee": release.report.guarantee,
        "scores_vs_ordinary_lda": scores, "lda_seeds": args.lda_seeds,
        "overlap_release_vs_own_fit": overlap_own,
        "overlap_own_fit_vs_seeds": seed_overlaps,
        "ratio_to_median_seed_overlap": overlap_own / float(np.median(seed_overlaps)),
        "nonprivate_fit_seconds": fit_seconds, "release_seconds": release_seconds,
        "pairs": release.diagnostics.get("sensitivity_sample", {}).get("h"), "sensitivity": float(release.report.sensitivity),
        "sigma": float(release.report.sigma),
        # the sample's spread (min, median, p90, max): whether Delta_s is one far pair or the bulk
        "deltas_quantiles": release.diagnostics.get("sensitivity_sample", {}).get("deltas_quantiles"),
        # the pair draws' entropy: with it the sample's pairs can be drawn again (sensitivity_tail.py --replay)
        "sample_seed": release.diagnostics.get("sensitivity_sample", {}).get("seed"),
        "release_top_words": [" ".join(r) for r in ours],
        "lda_top_words": [" ".join(r) for r in ldas[0]],
    }
    print(json.dumps({k: v for k, v in result.items() if "top_words" not in k}, indent=1))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
