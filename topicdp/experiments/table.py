"""The table users look at first: coherence and held-out perplexity of released topics on a real corpus,
at epsilon in {1, 3, 10}, for the spectral configurations and for TopicDP over gensim LDA.

Both roads protect the same unit, the user: TopicDP by sensitivity sampling over users (random DP), the
spectral configurations by per-user weighting (``SpectralDP(unit="user")``: replace-one-user, U public). Coherence (c_npmi, u_mass) and
perplexity are measured on held-out users' texts; non-private rows (epsilon = inf) give the ceiling.
"""

from __future__ import annotations

import json

import numpy as np

from ..adapters import make_model
from ..agnostic import TopicDP
from ..metrics import heldout_perplexity, topic_coherence
from ..spectral import PreconditionError, SpectralDP, SpectralLDA
from .agnostic import sampled_sensitivities

EPSILONS = (1.0, 3.0, 10.0)


def run_table(store, corpus, heldout, heldout_texts, corpus_name: str, grid, progress, cache_dir=None) -> None:
    k, delta, alpha0 = grid.n_topics, grid.delta, 1.0
    m = corpus.log.max_docs_per_user or int(np.bincount(corpus.doc_users).max())
    combos = [("topicdp-gensim-lda", e) for e in EPSILONS] + [(f"config{c}", e) for c in (1, 2, 3, 4) for e in EPSILONS]
    combos += [("gensim-lda-nonprivate", float("inf")), ("spectral-nonprivate", float("inf"))]
    todo = [c for c in combos if not store.has(**_key(c, corpus_name, k))]
    if not todo:
        return
    evaluate = _Evaluator(corpus.vocabulary, heldout, heldout_texts, alpha0 / k)
    lda = None
    for mech, eps in todo:
        extra, guarantee = None, "approx-DP"
        if mech.startswith(("topicdp", "gensim-lda")):
            if lda is None:
                model = make_model("gensim-lda", k, 0)
                W = model.fit_topic_word(corpus)
                samples, _ = sampled_sensitivities(model, corpus, grid.gammas, seed=0, n_jobs=grid.n_jobs,
                                                   cache_dir=cache_dir)
                lda = (model, W, samples[grid.gamma])
            model, W, sample = lda
            if mech == "gensim-lda-nonprivate":
                topics, guarantee = W, "none"
            else:  # the library's release path; P resamples the private corpus, as TopicDP did
                rel = TopicDP(eps, delta, grid.gamma, distribution="private-oracle",
                              random_state=np.random.default_rng(int(eps * 10))).privatize(
                    model, corpus, topic_word=W, sensitivity_sample=sample)
                topics, rep = rel.topic_word, rel.report
                guarantee, extra = rep.guarantee, {"sigma": rep.sigma, "sensitivity": rep.sensitivity, "gamma": grid.gamma}
        elif mech == "spectral-nonprivate":
            topics, guarantee = SpectralLDA(k, alpha0, random_state=0).fit(corpus.X).topic_word_, "none"
        else:
            try:
                est = SpectralDP(k, alpha0, int(mech[-1]), eps, delta, random_state=0, unit="user")
                topics = est.fit(corpus).topic_word_
            except PreconditionError as exc:
                store.write(_key((mech, eps), corpus_name, k), {"failed": 1.0}, delta=delta, guarantee="none",
                            extra={"reason": str(exc), "max_docs_per_user": m})
                continue
            extra = {"max_docs_per_user": m}
        store.write(_key((mech, eps), corpus_name, k), {"failed": 0.0, **evaluate(topics)}, delta=delta,
                    guarantee=guarantee, extra=extra)
    progress(f"table on {corpus_name}: {len(todo)} rows")


class _Evaluator:
    def __init__(self, vocabulary, heldout, texts, alpha):
        self.vocabulary, self.heldout, self.texts, self.alpha = vocabulary, heldout, texts, alpha

    def __call__(self, topics) -> dict:
        return {
            "c_npmi": topic_coherence(topics, self.vocabulary, self.texts, measure="c_npmi"),
            "u_mass": topic_coherence(topics, self.vocabulary, self.texts, measure="u_mass"),
            "perplexity": heldout_perplexity(topics, self.heldout.X, alpha=self.alpha, random_state=0),
        }


def _key(combo, name, k) -> dict:
    mech, eps = combo
    return {"panel": "table", "corpus": name, "mechanism": mech, "model": "", "n_topics": k, "epsilon": eps,
            "gamma": "", "repeat": 0}


def format_table(rows: list[dict]) -> str:
    """Markdown table: one line per (mechanism, epsilon) with c_npmi, u_mass, perplexity (or the failure)."""
    cells: dict = {}
    for r in rows:
        if r["panel"] == "table":
            cells.setdefault((r["mechanism"], float(r["epsilon"])), {})[r["metric"]] = (r["value"], r["extra"])
    lines = ["| mechanism | epsilon | c_npmi | u_mass | perplexity |", "|---|---|---|---|---|"]
    for (mech, eps), vals in sorted(cells.items()):
        if float(vals.get("failed", ("0", ""))[0]) == 1.0:
            reason = json.loads(vals["failed"][1]).get("reason", "")[:110].replace("|", "/")
            lines.append(f"| {mech} | {eps:g} | failed: {reason} | | |")
            continue
        get = lambda name: f"{float(vals[name][0]):.3f}" if name in vals else ""
        lines.append(f"| {mech} | {eps:g} | {get('c_npmi')} | {get('u_mass')} | {get('perplexity')} |")
    return "\n".join(lines)
