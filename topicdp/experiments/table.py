"""The table users look at first: coherence and held-out perplexity of released topics on a real corpus,
at epsilon in {1, 3, 10} (``CompareGrid.table_epsilons``), for every mechanism of the release pipeline and for TopicDP over gensim LDA.

Every mechanism runs through the pipeline's own registry (:data:`topicdp.pipeline.MECHANISMS`, the factories
``topicdp privatize`` uses), on the same corpus, budget and metrics. The table protects the user, with U
stated public (replace-one neighbours, as the spectral configurations need); a mechanism that cannot protect
users at that relation (DP-SVI: documents only) gets a row saying so. TopicDP's random-DP road samples its
sensitivity over users. Coherence (c_npmi, u_mass) and perplexity are measured on held-out users' texts;
non-private rows (epsilon = inf) give the ceiling.
"""

from __future__ import annotations

import json

import numpy as np

from ..adapters import make_model
from ..agnostic import TopicDP
from ..samplers import PRIVATE_ORACLE, SensitivitySampling
from ..metrics import heldout_perplexity, topic_coherence
from ..pipeline import MECHANISMS, CorpusSource, ReleaseRequest, VocabularyPolicy, plan_request
from ..rdp import PrivacyLedger
from ..spectral import PreconditionError, SpectralLDA
from .agnostic import sampled_sensitivities

UNIT, NEIGHBOURS = "user", "replace-one"


def run_table(store, corpus, heldout, heldout_texts, corpus_name: str, grid, progress, cache_dir=None) -> None:
    k, delta, alpha0 = grid.n_topics, grid.delta, 1.0
    epsilons = grid.table_epsilons
    combos = [(name, e) for name in MECHANISMS for e in epsilons] + [("topicdp-gensim-lda", e) for e in epsilons]
    combos += [("gensim-lda-nonprivate", float("inf")), ("spectral-nonprivate", float("inf"))]
    todo = [c for c in combos if not store.has(**_key(c, corpus_name, k))]
    if not todo:
        return
    evaluate = _Evaluator(corpus.vocabulary, heldout, heldout_texts, alpha0 / k)
    lda = None
    for mech, eps in todo:
        extra, guarantee = None, "approx-DP"
        if mech in MECHANISMS:
            topics, reason = _registry_release(MECHANISMS[mech], corpus, k, eps, delta)
            if topics is None:
                store.write(_key((mech, eps), corpus_name, k), {"failed": 1.0}, delta=delta, guarantee="none",
                            extra={"reason": reason})
                continue
        elif mech.startswith(("topicdp", "gensim-lda")):
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
                rel = TopicDP(model, epsilon=eps, delta=delta, sampling=SensitivitySampling(PRIVATE_ORACLE, grid.gamma),
                              random_state=np.random.default_rng(int(eps * 10))).fit(
                    corpus, topic_word=W, sensitivity_sample=sample).release_
                topics, rep = rel.topic_word, rel.report
                guarantee, extra = rep.guarantee, {"sigma": rep.sigma, "sensitivity": rep.sensitivity, "gamma": grid.gamma}
        else:  # spectral-nonprivate
            topics, guarantee = SpectralLDA(k, alpha0, random_state=0).fit(corpus.X).topic_word_, "none"
        store.write(_key((mech, eps), corpus_name, k), {"failed": 0.0, **evaluate(topics)}, delta=delta,
                    guarantee=guarantee, extra=extra)
    progress(f"table on {corpus_name}: {len(todo)} rows")


def _registry_release(mechanism, corpus, k: int, epsilon: float, delta: float):
    """(topics, None) of one registry mechanism at the table's unit, or (None, why it has no row)."""
    if UNIT not in mechanism.units or NEIGHBOURS not in mechanism.neighbours:
        return None, f"not applicable: {mechanism.name} protects {'/'.join(mechanism.units)}s under " \
                     f"{'/'.join(mechanism.neighbours)} neighbours"
    # the stated count is of every user, counted before the corpus dropped users left without documents
    n_users = corpus.n_users + corpus.log.users_without_documents
    plan = plan_request(ReleaseRequest(CorpusSource("embedded"), n_topics=k, epsilon=epsilon, delta=delta, unit=UNIT,
                                       n_units=n_users, vocabulary=VocabularyPolicy.public(corpus.vocabulary),
                                       mechanism=mechanism.name, seed=0))
    try:  # the topics' step only: the whole budget to the topics (the count is stated, the words are public)
        return mechanism.release(plan, corpus, n_units=n_users, ledger=PrivacyLedger()).topic_word, None
    except PreconditionError as exc:
        return None, str(exc)


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
    """Markdown table: one line per (mechanism, epsilon) with c_npmi, u_mass, perplexity (or the failure).

    A mechanism that does not apply at the table's unit and neighbour relation has no rows: one line under the table
    says why. The spectral rows' perplexity is footnoted: it is not comparable with the others' (see the note).
    """
    cells: dict = {}
    for r in rows:
        if r["panel"] == "table":
            cells.setdefault((r["mechanism"], float(r["epsilon"])), {})[r["metric"]] = (r["value"], r["extra"])
    lines = ["| mechanism | epsilon | c_npmi | u_mass | perplexity |", "|---|---|---|---|---|"]
    left_out: dict = {}
    spectral_perplexity = False
    for (mech, eps), vals in sorted(cells.items()):
        if float(vals.get("failed", ("0", ""))[0]) == 1.0:
            reason = json.loads(vals["failed"][1]).get("reason", "")
            if reason.startswith("not applicable"):
                left_out[mech] = reason
                continue
            lines.append(f"| {mech} | {eps:g} | failed: {reason[:110].replace('|', '/')} | | |")
            continue
        get = lambda name: f"{float(vals[name][0]):.3f}" if name in vals else ""
        mark = ""
        if mech.startswith("spectral") and "perplexity" in vals:
            mark, spectral_perplexity = " (*)", True
        lines.append(f"| {mech} | {eps:g} | {get('c_npmi')} | {get('u_mass')} | {get('perplexity')}{mark} |")
    for mech, reason in left_out.items():
        lines.append(f"\nLeft out: {mech}, {reason}.")
    if spectral_perplexity:
        lines.append(f"\n(*) Not comparable with the other rows: held-out tokens of a word that every topic gives "
                     f"probability 0 are scored at the floor {PERPLEXITY_FLOOR:g}, and the spectral method's topics "
                     "(projected onto the simplex) are 0 on many words, so its perplexity is set by those tokens. "
                     "Compare the spectral rows by coherence.")
    return "\n".join(lines)


#: the floor on word probabilities of :func:`topicdp.metrics.heldout_perplexity` (its default ``min_prob``)
PERPLEXITY_FLOOR = 1e-12
