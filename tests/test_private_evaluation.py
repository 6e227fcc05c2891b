"""Private evaluation of a release (topicdp.metrics.private): sensitivity by brute force, calibration against the
exact Gaussian profile, the ledger against dp-accounting, refusals, and the estimator's accuracy and interval on a
generated corpus (fixed seeds; the bounds are derived in each test's docstring)."""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re

import numpy as np
import pytest
import scipy.sparse as sp

from corpora import generated_lda, release_of_lists
from facts import assert_facts
from topicdp.corpus import Corpus
from topicdp.metrics import private as pv
from topicdp.metrics.readability import heldout_npmi, npmi_contrast, top_words_matrix
from topicdp.rdp import BudgetExceededError, PrivacyLedger, gaussian_delta

SMALL_LISTS = [["a", "b", "c"], ["c", "d", "e"]]


def _corpus_of(doc_word_sets, users=None, words=("a", "b", "c", "d", "e")) -> Corpus:
    rows = [[1 if w in d else 0 for w in words] for d in doc_word_sets]
    return Corpus.from_matrix(sp.csr_matrix(np.array(rows, dtype=np.int64)), list(words),
                              users=users if users is not None else list(range(len(rows))))


@pytest.fixture(scope="module")
def generated():
    """A generated LDA corpus (K = 5, 400 words, 6,000 documents) and its true topics' top-10 lists."""
    return generated_lda()


# -- the statistic -----------------------------------------------------------------------------------------


def test_noiseless_statistic_is_the_exact_npmi(generated):
    corpus, lists = generated
    design = pv.coherence_design(lists, n_across=0)
    ids = np.array([[corpus.vocabulary.index(w) for w in t] for t in lists])
    exact = heldout_npmi(top_words_matrix(ids, corpus.n_words), corpus, per_topic=True)
    ours = pv.exact_values(corpus, design)["npmi"]
    assert np.allclose(ours, exact, atol=1e-12)


def test_contrast_with_every_across_pair_sampled_is_close_to_the_exact_contrast(generated):
    """With n_across much larger than the 450 across pairs per topic the sample holds nearly all of them."""
    corpus, lists = generated
    ids = np.array([[corpus.vocabulary.index(w) for w in t] for t in lists])
    exact = npmi_contrast(top_words_matrix(ids, corpus.n_words), corpus)
    ours = pv.exact_values(corpus, pv.coherence_design(lists, n_across=3000))["mean_contrast"]
    assert abs(ours - exact) < 0.01


def test_design_is_public_and_deterministic():
    d1, d2 = pv.coherence_design(SMALL_LISTS, seed=4), pv.coherence_design(SMALL_LISTS, seed=4)
    assert np.array_equal(d1.pairs, d2.pairs) and d1.words == ("a", "b", "c", "d", "e")
    assert d1.dimension == 1 + 5 + d1.pairs.shape[0]
    assert all(idx.size == 3 for idx in d1.within) and all(idx.size == 3 for idx in d1.across)


# -- sensitivity by brute force ---------------------------------------------------------------------------


def _all_documents(words):
    return [set(s) for r in range(len(words) + 1) for s in itertools.combinations(words, r)]


@pytest.mark.parametrize("n_across", [0, 3, 10])
def test_document_sensitivity_by_brute_force(n_across):
    """Every possible document over the lists' words (all 32 word sets) added to or removed from a corpus, and every
    pair of them replacing each other: the clipped sum moves by at most the stated sensitivity, and add/remove
    attains it (the document holding every word)."""
    design = pv.coherence_design(SMALL_LISTS, n_across=n_across)
    docs = _all_documents(design.words)
    base = [{"a", "b"}, {"c", "d", "e"}, {"a"}]
    for clip in (pv.default_clip(design), 2.0, 3.5):
        sums = {}
        for i, d in enumerate(docs):
            x = pv.unit_contributions(_corpus_of(base + [d]), design, "document")
            sums[i] = pv.clipped_sum(x, clip)[0]
        x0 = pv.unit_contributions(_corpus_of(base), design, "document")
        s0 = pv.clipped_sum(x0, clip)[0]
        add = max(np.linalg.norm(s - s0) for s in sums.values())
        assert add <= pv.sensitivity(design, clip, "document", "add-remove") * (1 + 1e-12)
        assert add == pytest.approx(pv.sensitivity(design, clip, "document", "add-remove"))
        replace = max(np.linalg.norm(sums[i] - sums[j]) for i in sums for j in sums)
        assert replace <= pv.sensitivity(design, clip, "document", "replace-one") * (1 + 1e-12)


def test_user_sensitivity_by_brute_force():
    """Users of one or two documents (every pair of word sets over 5 words: 528 users) added to a fixed corpus of
    two users, clipped at C: ||change|| <= C (add/remove), and two such users swapped: <= sqrt(2) C (replace-one)."""
    design = pv.coherence_design(SMALL_LISTS, n_across=3)
    docs = _all_documents(design.words)
    users = [(d,) for d in docs] + [(d, e) for d, e in itertools.combinations_with_replacement(docs, 2)]
    base_docs, base_users = [{"a", "b", "c"}, {"d"}, {"a", "e"}], [0, 0, 1]
    clip = 4.0

    def clipped(extra):
        corpus = _corpus_of(base_docs + list(extra), users=base_users + [2] * len(extra))
        return pv.clipped_sum(pv.unit_contributions(corpus, design, "user"), clip)[0]

    s0 = pv.clipped_sum(pv.unit_contributions(_corpus_of(base_docs, users=base_users), design, "user"), clip)[0]
    sums = [clipped(u) for u in users]
    assert max(np.linalg.norm(s - s0) for s in sums) == pytest.approx(clip)
    rng = np.random.default_rng(0)
    pairs = rng.choice(len(sums), size=(3000, 2))
    worst = max(np.linalg.norm(sums[i] - sums[j]) for i, j in pairs)
    assert worst <= pv.sensitivity(design, clip, "user", "replace-one") * (1 + 1e-12)


# -- calibration and accounting ---------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon,delta,neighbours", [(0.1, 1e-6, "add-remove"), (1.0, 1e-6, "replace-one"),
                                                      (3.0, 1e-8, "add-remove")])
def test_sigma_against_the_exact_gaussian_profile(epsilon, delta, neighbours):
    """Balle & Wang 2018, Thm. 8: the calibrated sigma meets delta at epsilon, and 1e-6 less noise does not."""
    design = pv.coherence_design(SMALL_LISTS)
    sigma, D, _ = pv.calibrate(design, epsilon, delta, "document", neighbours)
    assert gaussian_delta(sigma, epsilon, D) <= delta
    assert gaussian_delta(sigma * (1 - 1e-6), epsilon, D) > delta


def test_ledger_entry_and_dp_accounting(generated):
    """One Gaussian entry labelled with the unit and neighbours; dp-accounting's PLD accountant on the ledger's event
    gives back the requested epsilon (to its discretisation, as in test_ledger_budget)."""
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    corpus, lists = generated
    ledger = PrivacyLedger()
    result = pv.private_coherence(lists, corpus, epsilon=0.8, delta=1e-6, ledger=ledger, random_state=0, n_boot=10)
    (entry,) = ledger.entries()
    assert entry["unit"] == "document" and entry["neighbours"] == "add-remove"
    assert entry["sigma"] == result.report["sigma"] and entry["sensitivity"] == result.report["sensitivity"]
    acc = PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-4)
    acc.compose(ledger.dp_event())
    assert acc.get_epsilon(1e-6) == pytest.approx(0.8, rel=1e-4)
    assert ledger.epsilon(1e-6, "exact") == pytest.approx(0.8, rel=1e-9)


class _Untouchable:
    """A corpus that fails the test if anything of it is read."""

    def __getattr__(self, name):
        raise AssertionError(f"the corpus was read ({name}) before the budget was checked")


def test_budget_is_checked_before_the_corpus_is_read():
    ledger = PrivacyLedger(budget=(0.5, 1e-6))
    with pytest.raises(BudgetExceededError):
        pv.private_coherence(SMALL_LISTS, _Untouchable(), epsilon=1.0, delta=1e-7, ledger=ledger)
    assert len(ledger) == 0


def test_mixed_units_are_refused_by_the_ledger(generated):
    corpus, lists = generated
    ledger = PrivacyLedger()
    ledger.add_gaussian("a user-level release", sigma=1.0, sensitivity=1.0, unit="user", neighbours="add-remove")
    with pytest.raises(ValueError, match="one unit"):
        pv.private_coherence(lists, corpus, epsilon=1.0, delta=1e-6, unit="document", ledger=ledger)


# -- accuracy and the interval ------------------------------------------------------------------------------


def test_accuracy_on_a_generated_corpus(generated):
    """40 noise redraws at epsilon 2 (sigma 48 against pair counts of 175 to thousands): |error of the mean NPMI|
    <= 0.02 in at least 37 of 40. Bound: the error's sd measured over 40 redraws is 0.0071 and its mean 0.0005, so
    0.02 is 2.8 sd and a redraw misses with probability about 0.005; four or more misses in 40 then has probability
    below 1e-4. Measured with this seed: 40 of 40."""
    corpus, lists = generated
    design = pv.coherence_design(lists)
    exact = pv.exact_values(corpus, design)
    S = pv.clipped_sum(pv.unit_contributions(corpus, design, "document"), pv.default_clip(design))[0]
    sigma, _, _ = pv.calibrate(design, 2.0, 1e-6, "document", "add-remove")
    rng = np.random.default_rng(7)
    err = np.array([pv.point_estimate(S + rng.normal(0.0, sigma, S.size), design, sigma)["mean_npmi"]
                    - exact["mean_npmi"] for _ in range(40)])
    assert np.sum(np.abs(err) <= 0.02) >= 37


def test_interval_coverage_on_a_generated_corpus(generated):
    """40 redraws at epsilon 2: the mean NPMI's and mean contrast's 90% intervals each cover the exact value (the
    contrast over every across pair) at least 32 times, and the 200 per-topic NPMI intervals at least 170 times.
    Bound: each interval holds its value with probability at least 0.9 (:func:`bound_intervals`: the union bound,
    up to the delta method's normal term); P(Binomial(40, 0.9) <= 31) = 0.015 and P(Binomial(200, 0.9) <= 169)
    = 0.007 (the 5 topics of a redraw share its noise; counted as independent). Measured with this seed: 40, 40
    and 200."""
    corpus, lists = generated
    design = pv.coherence_design(lists)
    exact = pv.exact_values(corpus, design)
    S = pv.clipped_sum(pv.unit_contributions(corpus, design, "document"), pv.default_clip(design))[0]
    sigma, _, _ = pv.calibrate(design, 2.0, 1e-6, "document", "add-remove")
    rng = np.random.default_rng(11)
    covered = np.zeros(3, dtype=int)
    for _ in range(40):
        est = pv.estimate(S + rng.normal(0.0, sigma, S.size), design, sigma)
        for i, key in enumerate(("mean_npmi", "mean_contrast")):
            lo, hi = est[key + "_interval"]
            covered[i] += lo <= exact[key] <= hi
        lo, hi = est["npmi_interval"].T
        covered[2] += int(np.sum((lo <= exact["npmi"]) & (exact["npmi"] <= hi)))
    assert covered[0] >= 32 and covered[1] >= 32 and covered[2] >= 170, covered


def test_one_measure_for_the_exact_value_the_estimator_and_the_readability_score():
    """On a small corpus with a pair that never co-occurs (a, e), a word no document holds (f) and documents
    holding none of the top words: the exact value the private evaluation estimates, the noiseless statistic's
    plug-in, and heldout_npmi / npmi_contrast agree to 1e-12 (N counts every document)."""
    words = ("a", "b", "c", "d", "e", "f", "g")
    docs = [{"a", "b"}, {"a", "b", "c"}, {"c", "d"}, {"d", "e"}, {"b", "c", "d", "e"}, {"g"}, set(), {"g"}, {"a"}]
    rows = sp.csr_matrix(np.array([[1 if w in d else 0 for w in words] for d in docs], dtype=np.int64))
    corpus = Corpus(rows, words, np.arange(len(docs)))
    lists = [["a", "b", "c"], ["d", "e", "f"]]
    design = pv.coherence_design(lists, n_across=9)
    exact = pv.exact_values(corpus, design)
    W = top_words_matrix(np.array([[words.index(w) for w in t] for t in lists]), len(words))
    assert np.allclose(exact["npmi"], heldout_npmi(W, corpus, top_n=3, per_topic=True), atol=1e-12, rtol=0)
    assert abs(exact["mean_npmi"] - heldout_npmi(W, corpus, top_n=3)) < 1e-12
    assert np.allclose(exact["contrast"], npmi_contrast(W, corpus, top_n=3, per_topic=True), atol=1e-12, rtol=0)
    assert abs(exact["mean_contrast"] - npmi_contrast(W, corpus, top_n=3)) < 1e-12
    S = pv.clipped_sum(pv.unit_contributions(corpus, design, "document"), pv.default_clip(design))[0]
    assert S[0] == len(docs)
    plug = pv.topic_values(S, design)
    assert np.allclose(plug["npmi"], exact["npmi"], atol=1e-12, rtol=0)
    v = pv.pair_npmi(S, design)
    ae = [i for i, (x, y) in enumerate(design.pairs) if {design.words[x], design.words[y]} == {"a", "e"}]
    assert ae and np.all(v[ae] == -1.0)
    df = [i for i, (x, y) in enumerate(design.pairs) if "f" in (design.words[x], design.words[y])]
    assert df and np.all(v[df] == -1.0)


def test_pair_ranges_hold_every_count_in_the_box():
    """The range of :func:`_pair_ranges` holds the NPMI of every integer count vector within r of the noisy one
    (checked on 2,000 random truths and shifts, including pairs that never co-occur and a pair in every document):
    its ends are the box's corners because NPMI is monotone in each count."""
    from topicdp.metrics.readability import npmi_from_counts

    design = pv.coherence_design([["a", "b", "c"], ["c", "d", "e"]], n_across=0)
    U, (a, b) = len(design.words), design.pairs.T
    rng = np.random.default_rng(4)
    r = 7.0
    for _ in range(2000):
        N = int(rng.integers(20, 60))
        df = rng.integers(0, N + 1, U)
        c = np.array([rng.integers(0, min(df[i], df[j]) + 1) for i, j in zip(a, b)])
        truth = npmi_from_counts(N, df[a], df[b], c)
        noisy = np.concatenate([[N], df, c]).astype(float) + rng.uniform(-r, r, 1 + U + c.size)
        lo, hi = pv._pair_ranges(noisy, design, np.array([r]))
        assert np.all(lo[0] <= truth + 1e-12) and np.all(truth <= hi[0] + 1e-12)


def _rare_words_corpus(n_docs: int = 4000, n_words: int = 40, rate: float = 0.01, seed: int = 5):
    """Words each in a document with probability ``rate``, independently: a pair co-occurs in about
    n_docs rate^2 = 0.4 documents, so most pairs of a random list co-occur rarely and its NPMI is far below 0."""
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix((rng.random((n_docs, n_words)) < rate).astype(np.int64))
    words = [f"zr{chr(97 + j // 26)}{chr(97 + j % 26)}" for j in range(n_words)]
    return Corpus(X, words, np.arange(n_docs)), words


def test_a_noisy_lists_interval_holds_its_low_exact_value():
    """Four random lists of 10 rare words (exact mean NPMI far below 0) at epsilon 1, 40 fixed-seed redraws: the mean
    NPMI's 90% interval holds the exact value in at least 32 (P(Binomial(40, 0.9) <= 31) = 0.015), whatever
    the empirical-Bayes estimate's shrinkage towards the pairs' prior; and the evaluation refuses the intervals
    there, saying the noise leaves them undetermined (the mean's interval is wider than +-0.5)."""
    corpus, words = _rare_words_corpus()
    rng = np.random.default_rng(2)
    lists = [list(t) for t in rng.permutation(words).reshape(4, 10)]
    design = pv.coherence_design(lists)
    exact = pv.exact_values(corpus, design)
    assert exact["mean_npmi"] < -0.3
    S = pv.clipped_sum(pv.unit_contributions(corpus, design, "document"), pv.default_clip(design))[0]
    sigma, _, _ = pv.calibrate(design, 1.0, 1e-6, "document", "add-remove")
    covered = 0
    for _ in range(40):
        lo, hi = pv.estimate(S + rng.normal(0.0, sigma, S.size), design, sigma)["mean_npmi_interval"]
        covered += lo <= exact["mean_npmi"] <= hi
    assert covered >= 32, covered
    result = pv.private_coherence(lists, corpus, epsilon=1.0, delta=1e-6, random_state=0)
    assert "too few units" in result.interval_refused and np.all(np.isnan(result.npmi_interval))
    assert "REFUSED" in result.summary() and "too few units" in result.to_dict()["interval_refused"]
    # the forecast before spending (rates of a corpus of the same kind: here the same one) says so too
    forecast = pv.predict_error(design, pv.reference_rates(corpus, design), corpus.n_docs, epsilon=1.0, delta=1e-6,
                                n_sim=10)
    assert "too few units" in forecast.refused and forecast.half_width > 0.5 and "REFUSED" in forecast.line()


def test_intervals_that_cannot_hold_the_exact_value_are_refused(generated):
    """The user level (no public bound on a user's documents, so on clipping's shift) and a document clip below
    the worst case are refused with their reason; the document level at the default clip is not, here."""
    corpus, lists = generated
    design = pv.coherence_design(lists)
    assert "user level" in pv.interval_refusal(design, "user", pv.default_clip(design))
    assert "clip 5" in pv.interval_refusal(design, "document", 5.0)
    assert pv.interval_refusal(design, "document", pv.default_clip(design), (0.1, 0.2)) is None
    assert "+-0.60" in pv.interval_refusal(design, "document", pv.default_clip(design), (-0.5, 0.7))
    result = pv.private_coherence(lists, corpus, epsilon=2.0, delta=1e-6, random_state=0)
    assert result.interval_refused is None and np.all(np.isfinite(result.npmi_interval))
    assert result.report["interval_refused"] is None
    forecast = pv.predict_error(design, pv.reference_rates(corpus, design), corpus.n_docs, epsilon=2.0, delta=1e-6,
                                n_sim=10)
    assert forecast.refused is None and forecast.half_width < 0.5
    users = pv.predict_error(design, pv.reference_rates(corpus, design, "user"), corpus.n_users, epsilon=2.0,
                             delta=1e-6, unit="user", n_sim=10)
    assert "user level" in users.refused


def _topic_effect_sums(seed: int = 0):
    """Noiseless sums of a made-up corpus (N = 20,000 documents, 6 topics of 10 words, NPMI only) whose topics
    differ beyond their words' frequencies: the pairs of topic k co-occur e^(delta_k + e) times as often as under
    independence, delta_k from -0.6 to 0.6 by topic and e ~ N(0.3, 0.3) by pair. Word counts 300 to 3,000, so
    the pair counts run from a few to several hundred: most lie within a few sigma of 0 at sigma 60, where the
    estimate of a pair is shrunk towards its group's prior and each topic's shrinkage has a sign of its own."""
    lists = [[f"w{k}x{j}" for j in range(10)] for k in range(6)]
    design = pv.coherence_design(lists, n_across=0)
    rng = np.random.default_rng(seed)
    N = 20000.0
    df = np.round(np.exp(rng.uniform(math.log(300), math.log(3000), len(design.words))))
    a, b = design.pairs.T
    topic = np.zeros(design.pairs.shape[0], dtype=np.int64)
    for k, idx in enumerate(design.within):
        topic[idx] = k
    t = np.linspace(-0.6, 0.6, 6)[topic] + rng.normal(0.3, 0.3, topic.size)
    pairs = np.round(np.minimum(df[a] * df[b] / N * np.exp(t), np.minimum(df[a], df[b])))
    return design, np.concatenate([[N], df, pairs])


def test_each_topic_interval_covers_when_topics_differ_beyond_their_frequencies():
    """50 noise redraws at sigma 60: of the 300 per-topic 90% intervals, at least 255 cover the topic's exact
    NPMI. Each holds its value with probability at least 0.9 (the bound of :func:`bound_intervals`), and
    P(Binomial(300, 0.9) <= 254) = 0.0014 (the 6 intervals of a redraw share its noise: counted as independent).
    The bootstrap interval this replaced covered 249 of 300 on another seed (0.83: P(Binomial(300, 0.83) >= 255)
    = 0.2), the one before it 198: the shrinkage's bias of each topic, which the bounds hold and the bootstrap
    did not. With this seed: the count is printed on failure."""
    design, S = _topic_effect_sums()
    truth = pv.topic_values(S, design)["npmi"]
    sigma = 60.0
    rng = np.random.default_rng(17)
    covered = 0
    for _ in range(50):
        est = pv.estimate(S + rng.normal(0.0, sigma, S.size), design, sigma)
        lo, hi = est["npmi_interval"].T
        covered += int(np.sum((lo <= truth) & (truth <= hi)))
    assert covered >= 255, covered


def test_prediction_from_a_public_half_matches_the_private_half(generated):
    """The prediction reads another corpus of the same kind (the other half of the users) and a stated size; its
    90% error quantile is within a factor 2 of the one simulated on the private half itself (both at epsilon 0.3)."""
    corpus, lists = generated
    users = corpus.doc_users
    private = corpus.subset_documents(np.flatnonzero(users % 2 == 0))
    public = corpus.subset_documents(np.flatnonzero(users % 2 == 1))
    design = pv.coherence_design(lists)
    predicted = pv.predict_error(design, pv.reference_rates(public, design), public.n_docs, epsilon=0.3,
                                 delta=1e-6, n_sim=30)
    measured = pv.predict_error(design, pv.reference_rates(private, design), private.n_docs, epsilon=0.3,
                                delta=1e-6, n_sim=30, seed=1)
    assert 0.5 <= predicted.quantile / measured.quantile <= 2.0
    assert "epsilon 0.3" in predicted.line()


def test_the_result_says_what_it_guarantees(generated):
    corpus, lists = generated
    result = pv.private_coherence(lists, corpus, epsilon=2.0, delta=1e-6, unit="user", neighbours="replace-one",
                                  random_state=1, n_boot=10)
    r = result.report
    assert r["guarantee"] == "approx-DP" and r["unit"] == "user" and r["neighbours"] == "replace-one"
    assert r["sensitivity"] == pytest.approx(math.sqrt(2) * r["clip"]) and r["seeded"] is True
    assert "std of the Gaussian noise" in r["sigma_meaning"]
    data = json.loads(json.dumps(result.to_dict()))
    assert len(data["topics"]) == 5 and data["report"]["epsilon"] == 2.0
    assert "SEEDED" in result.summary()
    assert result.npmi_interval.shape == (5, 2) and "user level" in result.interval_refused
    assert data["interval_refused"] == result.interval_refused and "REFUSED" in result.summary()


@pytest.mark.parametrize("kwargs,match", [({"epsilon": -1.0}, "epsilon must be in"),
                                          ({"delta": 1.5}, "delta must be in"),
                                          ({"unit": "word"}, "unit must be one of"),
                                          ({"clip": 0.0}, "clip must be in"),
                                          ({"neighbours": "any"}, "neighbours must be one of")])
def test_validation_names_the_parameter(kwargs, match):
    args = {"epsilon": 1.0, "delta": 1e-6, **kwargs}
    with pytest.raises(ValueError, match=match):
        pv.private_coherence(SMALL_LISTS, _Untouchable(), **args)


def test_lists_must_be_lists_of_distinct_words():
    with pytest.raises(ValueError, match="top_words"):
        pv.coherence_design([["a", "a", "b"]])
    with pytest.raises(ValueError, match="top_words"):
        pv.coherence_design([["a", "b"], ["c"]])


# -- the release method and the command -------------------------------------------------------------------


def test_release_evaluate_uses_the_release_unit(generated):
    corpus, lists = generated
    ledger = PrivacyLedger()
    result = release_of_lists(lists).evaluate(corpus, epsilon=1.0, delta=1e-6, ledger=ledger,
                                                      random_state=0, n_boot=10)
    assert result.report["unit"] == "document" and len(ledger) == 1
    assert [list(t) for t in result.top_words] == lists


def test_evaluate_command(tmp_path, generated, capsys):
    from topicdp import evaluate_cli

    corpus, lists = generated
    release = release_of_lists(lists)
    release.save(tmp_path / "release.json")
    X = corpus.X[:800].toarray()
    lines = [json.dumps({"user": int(corpus.doc_users[i]),
                         "text": " ".join(w for j, w in enumerate(corpus.vocabulary) for _ in range(X[i, j]))})
             for i in range(X.shape[0])]
    (tmp_path / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    parser = argparse.ArgumentParser()
    evaluate_cli.populate(parser)
    (tmp_path / "public.jsonl").write_text("\n".join(lines[:400]) + "\n")
    def evaluate(epsilon: str) -> int:
        args = parser.parse_args([str(tmp_path / "release.json"), str(tmp_path / "corpus.jsonl"), "--epsilon",
                                  epsilon, "--seed", "0", "--out", str(tmp_path / "evaluation.json"),
                                  "--reference", str(tmp_path / "public.jsonl"), "--n-units", "800"])
        args.check(args)
        return args.func(args)

    assert evaluate("2") == 0
    out = capsys.readouterr().out
    assert "mean NPMI" in out and "each document" in out
    assert out.index("forecast before spending") < out.index("private evaluation:")
    assert json.loads((tmp_path / "evaluation.json").read_text())["report"]["epsilon"] == 2.0
    with pytest.raises(ValueError, match="--epsilon"):
        evaluate_cli.check_arguments(parser.parse_args([str(tmp_path / "release.json"), "x", "--epsilon", "0"]))


def test_evaluate_command_at_the_user_level_refuses_before_spending(tmp_path, generated, capsys, monkeypatch):
    """At the user level the interval is refused whatever the noise draws (clipping's shift has no public bound), so
    the command refuses before it reads the corpus or writes to the ledger: status 2, the reason naming the user
    level, the ledger empty, no output file -- the rule compare applies (evaluation_refusal)."""
    import topicdp.corpus as corpus_module
    from topicdp import evaluate_cli

    corpus, lists = generated
    release_of_lists(lists).save(tmp_path / "release.json")
    path = str(tmp_path / "data.ledger")
    PrivacyLedger.open(path, budget=(30.0, 1e-5), unit="user", neighbours="add-remove")
    reads: list = []
    monkeypatch.setattr(corpus_module, "read_jsonl_records", lambda *a, **k: reads.append(a) or iter(()))
    (tmp_path / "corpus.jsonl").write_text('{"user": 1, "text": "w"}\n')
    parser = argparse.ArgumentParser()
    evaluate_cli.populate(parser)
    args = parser.parse_args([str(tmp_path / "release.json"), str(tmp_path / "corpus.jsonl"), "--epsilon", "10",
                              "--unit", "user", "--ledger", path, "--out", str(tmp_path / "evaluation.json")])
    args.check(args)
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert "before spending" in err and "user level" in err and "nothing spent" in err
    assert reads == [] and len(PrivacyLedger.open(path)) == 0 and not (tmp_path / "evaluation.json").exists()


def test_evaluate_command_charges_a_persisted_ledger_before_reading(tmp_path, generated, capsys, monkeypatch):
    """--ledger FILE: the evaluation is checked against the dataset's persisted ledger before the corpus is read and
    written to it (one entry, composed with the file's); one that would exceed the budget is refused with the corpus
    unread and the file unchanged."""
    import topicdp.corpus as corpus_module
    from topicdp import evaluate_cli
    from topicdp.rdp import BudgetExceededError

    corpus, lists = generated
    release_of_lists(lists).save(tmp_path / "release.json")
    X = corpus.X[:400].toarray()
    (tmp_path / "corpus.jsonl").write_text("".join(
        json.dumps({"user": int(corpus.doc_users[i]),
                    "text": " ".join(w for j, w in enumerate(corpus.vocabulary) for _ in range(X[i, j]))}) + "\n"
        for i in range(X.shape[0])))
    path = str(tmp_path / "data.ledger")
    PrivacyLedger.open(path, budget=(3.0, 1e-5), unit="document", neighbours="add-remove")
    parser = argparse.ArgumentParser()
    evaluate_cli.populate(parser)

    def evaluate(epsilon: str):
        args = parser.parse_args([str(tmp_path / "release.json"), str(tmp_path / "corpus.jsonl"), "--epsilon",
                                  epsilon, "--seed", "0", "--ledger", path])
        args.check(args)
        return args.func(args)

    assert evaluate("2") == 0
    first = PrivacyLedger.open(path)
    assert len(first) == 1 and 0 < first.epsilon(1e-5) <= 2.0 * (1 + 1e-9)
    reads: list = []
    monkeypatch.setattr(corpus_module, "read_jsonl_records", lambda *a, **k: reads.append(a) or iter(()))
    with pytest.raises(BudgetExceededError):  # (3, 1e-6) alone is (2.67, 1e-5); with the first, 3.33 exactly
        evaluate("3")
    assert reads == [] and len(PrivacyLedger.open(path)) == 1


# -- reading the scores: targets, contrast, a public yardstick, common words ------------------------------------


def _chatter_records(prefix: str, n_users: int, seed: int) -> list[dict]:
    """Users of four themes (15 letters-only words each, 20 tokens a post) whose posts also hold 30 tokens of 100
    general words (every post draws from them): the general words are the corpus' most common."""
    rng = np.random.default_rng(seed)
    general = [f"zqg{chr(97 + j // 26)}{chr(97 + j % 26)}" for j in range(100)]
    themes = [[f"zqt{chr(97 + t)}{chr(97 + j // 26)}{chr(97 + j % 26)}" for j in range(15)] for t in range(4)]
    out = []
    for u in range(n_users):
        theme = themes[int(rng.integers(4))]
        for _ in range(3):
            words = list(rng.choice(general, size=30)) + list(rng.choice(theme, size=20))
            out.append({"user": f"{prefix}{u}", "text": " ".join(words)})
    return out


@pytest.fixture(scope="module")
def chatter(tmp_path_factory):
    """A release by hand: the four themes' first ten words and one topic of the reference's ten most common words;
    a public reference, a private corpus and the same corpus with one more user."""
    base = tmp_path_factory.mktemp("chatter")
    reference = _chatter_records("p", 200, 1)
    public = Corpus.from_texts([r["text"] for r in reference])
    df = np.asarray((public.X > 0).sum(axis=0)).ravel()
    common = [public.vocabulary[j] for j in sorted(range(df.size), key=lambda j: (-df[j], public.vocabulary[j]))]
    themes = [[f"zqt{chr(97 + t)}a{chr(97 + j)}" for j in range(10)] for t in range(4)]
    lists = themes + [list(common[:10])]
    release_of_lists(lists).save(base / "release.json")
    private = _chatter_records("u", 150, 2)
    files = {"reference": reference, "private": private, "added": private + _chatter_records("x", 1, 9)}
    for name, records in files.items():
        (base / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return base, lists


def _evaluate(base, corpus: str, *flags: str) -> str:
    from topicdp.cli import main

    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["evaluate", str(base / "release.json"), str(base / corpus), "--epsilon", "2", "--seed", "0",
                     *flags]) == 0
    return buffer.getvalue()


def test_evaluate_prints_the_targets_the_contrast_and_a_public_yardstick(chatter):
    """The targets are the plan's (topicdp.forecast.TARGETS), the contrast's definition is readability's own words,
    and with --reference a non-private LDA's exact scores on the reference give the scale, with each score over it."""
    import importlib

    from topicdp.forecast import TARGETS
    from topicdp.metrics.readability import CONTRAST_DEFINITION

    base, _ = chatter
    module = importlib.import_module("topicdp.metrics.readability")
    assert CONTRAST_DEFINITION in " ".join(str(module.__doc__).split())  # quoted, not paraphrased
    out = _evaluate(base, "private.jsonl", "--reference", str(base / "reference.jsonl"))
    t = TARGETS["document"]
    assert_facts(out, f"NPMI at least {t.npmi:g}x", f"contrast at least {t.contrast:g}x", "non-private LDA")
    assert f"contrast = {CONTRAST_DEFINITION}: how much more a topic's top words co-occur" in out
    yardstick = next(line for line in out.splitlines() if "yardstick (free: public data" in line)
    assert "held-out 50% of users" in yardstick and re.search(r"NPMI -?\d\.\d{3}, contrast -?\d\.\d{3}", yardstick)
    for name, target in (("NPMI", t.npmi), ("contrast", t.contrast)):  # the score over the yardstick's, its target
        line = next(line for line in out.splitlines() if re.search(rf"mean {name} -?\d\.\d{{3}} = -?\d+\.\d\dx \[", line))
        assert_facts(line, "yardstick", f"(target {target:g}x)", ordered=True)
    assert out.index("private evaluation:") < out.index("how to read these scores:")


def test_evaluate_flags_the_topic_of_common_words_from_public_facts(chatter):
    base, lists = chatter
    out = _evaluate(base, "private.jsonl", "--reference", str(base / "reference.jsonl"), "--out",
                    str(base / "evaluation.json"), "--overwrite")
    reading = json.loads((base / "evaluation.json").read_text())["reading"]
    assert reading["common_words"]["flagged"] == [False] * 4 + [True] and reading["yardstick"]["n_topics"] == 5
    flags = [line for line in out.splitlines() if line.startswith("    topic ")]
    assert len(flags) == len(lists)
    assert [("COMMON WORDS" in line) for line in flags] == [False] * 4 + [True]
    assert_facts(flags[4], "topic 4", "10 of its 10 top words", "100 most common", ordered=True)
    assert "never the private corpus' frequencies" in out
    without = _evaluate(base, "private.jsonl")
    assert_facts(next(line for line in without.splitlines() if "cannot be flagged" in line), "common words",
                 "--reference")
    assert "COMMON WORDS" not in without and "NPMI at least" in without


def test_the_yardstick_and_the_flag_do_not_read_the_private_corpus(chatter):
    """Two private corpora that differ in one user, same seed: everything printed to read the scores by is the same
    but for the lines that divide the DP scores by the yardstick."""
    base, _ = chatter
    outs = [_evaluate(base, name, "--reference", str(base / "reference.jsonl"))
            for name in ("private.jsonl", "added.jsonl")]
    reading = [o[o.index("how to read these scores:"):].splitlines() for o in outs]
    public = [[line for line in r if not line.lstrip().startswith(("mean NPMI", "mean contrast"))] for r in reading]
    assert public[0] == public[1] and any("yardstick (free" in line for line in public[0])
    assert any("COMMON WORDS" in line for line in public[0])


def test_the_yardsticks_vocabulary_is_the_pipelines_ordinary_one():
    from topicdp.metrics.yardstick import ORDINARY_VOCABULARY
    from topicdp.pipeline import VocabularyPolicy

    policy = VocabularyPolicy.from_reference()
    assert ORDINARY_VOCABULARY == {"min_df": policy.min_df, "max_df": policy.max_df, "max_features": policy.max_features}
