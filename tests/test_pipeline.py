"""The release pipeline from Python: one composed report for every mechanism, truthful refusals, and the
request's validation before anything is read."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import topicdp.forecast as forecast_module
from topicdp.pipeline import (MECHANISMS, CorpusSource, ReleaseRefused, ReleaseRequest, VocabularyPolicy, release,
                              split_budget)

from corpora import WORDS, three_block_texts
from facts import assert_facts


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    """400 users x 3 documents; each document draws from one block of twenty words (three topics), so every
    word is shared by many users (a DP vocabulary keeps them)."""
    path = tmp_path_factory.mktemp("pipeline") / "corpus.jsonl"
    lines = [json.dumps({"user": u, "text": text}) for u, _, text in three_block_texts(400, 3, size=30)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture
def few_draws(monkeypatch):
    """The simulation on the reference with 3 draws and one LDA fit instead of 9 and 3: these tests check where the
    simulation runs and what the plan prints of it, not its accuracy (``tests/test_variational.py`` and the decision
    table do), and its fits were two thirds of their time."""

    monkeypatch.setattr(forecast_module, "SIMULATION_LDA_SEEDS", 1)
    monkeypatch.setattr(forecast_module, "SIMULATION_DRAWS", 3)  # the pipeline's simulation reads it at each call


def _request(path, mechanism, **kwargs):
    unit = "document" if mechanism == "dpsvi" else "user"
    stated = 400 if mechanism.startswith("spectral") else None
    return ReleaseRequest(CorpusSource(path), VocabularyPolicy.dp(max_features=100), epsilon=30.0, delta=1e-3,
                          unit=unit, n_units=stated, n_topics=3, mechanism=mechanism, release_anyway=True, seed=0,
                          **kwargs)


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
def test_every_mechanism_composes_the_count_and_a_dp_vocabulary(mechanism, corpus_file):
    """The report of every mechanism states the request's total, lists the count (when not stated) and the
    vocabulary's ledger entries before the topics', and certifies at most the total."""
    request = _request(corpus_file, mechanism)
    try:
        result = release(request, echo=lambda line: None)
    except ReleaseRefused as refused:  # configurations 2-4 check preconditions on released quantities
        assert mechanism in ("spectral-config-2", "spectral-config-3", "spectral-config-4"), refused
        assert "precondition failed" in str(refused) and "part of the topics' budget" in str(refused)
        return
    report = result.release.report
    names = [entry["name"] for entry in report.composition]
    expected = ([] if request.n_units is not None else ["unit count"]) + [
        "vocabulary selection", "vocabulary selection (threshold)"]
    assert names[:len(expected)] == expected and len(names) > len(expected)
    assert report.mechanism == mechanism and report.neighbours == str(request.neighbours)
    assert (report.epsilon, report.delta) == (30.0, 1e-3)
    assert report.published["vocabulary"].startswith("DP")
    basic = next(t for t in report.composition_total if t["accounting"].startswith("basic"))
    topics = split_budget(request).topics
    assert basic["valid"] and basic["details"]["topic_step_epsilon"] <= topics.epsilon * (1 + 1e-9)
    assert report.certified_epsilon() <= 30.0 * (1 + 1e-9)
    counts = {k: v for k, v in report.details.items() if k in ("n_users", "n_documents", "n_docs")}
    assert counts == ({} if request.n_units is None else {"n_users": request.n_units})  # only a stated count


def test_a_refusal_says_what_was_spent(corpus_file):
    request = ReleaseRequest(CorpusSource(corpus_file), VocabularyPolicy.dp(max_features=100), epsilon=0.05,
                             delta=1e-6, n_topics=3, seed=0)
    with pytest.raises(ReleaseRefused) as caught:
        release(request, echo=lambda line: None)
    budget = split_budget(request).count
    assert caught.value.spent == (f"the unit count ({budget})",)  # the step and its budget
    assert "the topics' budget was not spent" in str(caught.value)


def test_a_stated_count_that_is_not_the_corpus_is_refused_before_any_budget(corpus_file):
    request = ReleaseRequest(CorpusSource(corpus_file), VocabularyPolicy.dp(max_features=100), n_units=399,
                             n_topics=3)
    with pytest.raises(ReleaseRefused, match="no budget was spent") as caught:
        release(request, echo=lambda line: None)
    assert caught.value.spent == () and "399" in str(caught.value)


@pytest.mark.parametrize("kwargs, message", [
    ({"unit": "document", "source": CorpusSource("embedded", max_docs_per_user=2)}, "per-user document cap"),
    ({"unit": "document", "source": CorpusSource("embedded", max_tokens_per_user=200)}, "per-user token cap"),
    ({"n_topics": 6000}, "max_features"),
    ({"vocabulary": VocabularyPolicy.public(["a", "b"]), "n_topics": 3}, r"public vocabulary \(2\)"),
    ({"guarantee": "random-dp"}, "sampling distribution P"),
    ({"mechanism": "spectral-config-2"}, None),  # accepted here; the plan asks for a stated count
    ({"epsilon": -1.0}, "epsilon"),
])
def test_the_request_checks_what_needs_no_private_data(kwargs, message):
    base = {"source": CorpusSource("embedded"), "vocabulary": VocabularyPolicy.from_texts()}
    if message is None:
        ReleaseRequest(**{**base, **kwargs})
        return
    with pytest.raises(ValueError, match=message):
        ReleaseRequest(**{**base, **kwargs})


@pytest.mark.parametrize("template, error, message", [
    (dict(epsilon=1.0), ValueError, "agnostic sets epsilon: the request decides"),
    (dict(unit="document", random_state=3), ValueError, "agnostic sets unit, random_state"),
    (dict(calibration="exact"), ValueError, "calibration"),
    (dict(secure_noise=True, calibration="analytic"), ValueError, "secure_noise"),
    (dict(n_topics=4), ValueError, "n_topics=4, the request n_topics=10"),
])
def test_the_agnostic_template_is_refused_where_the_request_would_overrule_it(template, error, message):
    from topicdp import TopicDP
    from topicdp.adapters import make_model

    k = template.pop("n_topics", 10)
    base = {"source": CorpusSource("embedded"), "vocabulary": VocabularyPolicy.from_texts()}
    with pytest.raises(error, match=message):
        ReleaseRequest(**base, agnostic=TopicDP(make_model("sklearn-lda", k), **template))
    with pytest.raises(TypeError, match="agnostic must be a TopicDP"):
        ReleaseRequest(**base, agnostic="gensim-lda")


def test_the_agnostic_template_carries_the_users_own_model_and_stays_as_given():
    """A scikit-learn LDA as the template's model reaches the release's TopicDP unchanged (TopicDP wraps it at fit);
    the request's budget and seed are set on a clone, never on the caller's object."""
    from sklearn.decomposition import LatentDirichletAllocation

    from topicdp import TopicDP
    from topicdp.samplers import PRIVATE_ORACLE, SensitivitySampling

    mine = TopicDP(LatentDirichletAllocation(n_components=3, random_state=0),
                   sampling=SensitivitySampling(PRIVATE_ORACLE, 0.2, insecure_testing=True))
    request = ReleaseRequest(CorpusSource("embedded"), VocabularyPolicy.from_texts(), n_topics=3, guarantee="random-dp",
                             agnostic=mine, seed=0, epsilon=2.0)
    assert request.topicdp is not mine and mine.get_params()["random_state"] is None
    assert request.topicdp.get_params()["model__n_components"] == 3
    with pytest.raises(ValueError, match="n_components=3, the request n_topics=4"):
        ReleaseRequest(CorpusSource("embedded"), VocabularyPolicy.from_texts(), n_topics=4, agnostic=mine)


def test_neighbours_follow_what_the_owner_states():
    base = {"source": CorpusSource("embedded"), "vocabulary": VocabularyPolicy.from_texts()}
    assert ReleaseRequest(**base).neighbours == "add-remove"
    assert ReleaseRequest(**base, n_units=300).neighbours == "replace-one"
    assert split_budget(ReleaseRequest(**base, n_units=300)).count is None


def test_a_spectral_configuration_forecast_to_fail_its_utility_check_is_refused_before_any_budget(tmp_path):
    """Every road stops on a noise forecast: for a spectral configuration, the forecast of its own run-time
    utility check (M2 noise below half the spectral gap), from public quantities."""
    row = MECHANISMS["spectral-config-1"]
    fc = row.forecast(epsilon=3.0, delta=1e-6, unit="user", neighbours="replace-one", n_units=300, n_topics=5,
                      n_words=5000)
    assert fc.verdict == "noise" and fc.m2_noise > 0.5
    big = row.forecast(epsilon=3.0, delta=1e-6, unit="user", neighbours="replace-one", n_units=10**9, n_topics=5,
                       n_words=500)
    assert big.verdict != "noise" and big.m2_noise < fc.m2_noise
    request = ReleaseRequest(CorpusSource("embedded"), VocabularyPolicy.from_texts(), mechanism="spectral-config-1",
                             n_units=300, n_topics=5)
    with pytest.raises(ReleaseRefused, match="no budget was spent"):
        release(request, echo=lambda line: None)


@pytest.mark.parametrize("epsilon, delta", [(3.0, 1e-6), (1.0, 1e-5), (10.0, 1e-8)])
def test_the_unit_count_meets_the_exact_gaussian_profile_of_its_share(epsilon, delta, corpus_file):
    """The count's sigma, recorded in the report's composition, against the exact privacy profile of the Gaussian
    mechanism at L2 sensitivity 1 (Balle & Wang 2018, Thm. 8), evaluated here with scipy: at the count's share
    of the budget, delta(eps_c) <= delta_c, and a 1% smaller sigma would not meet it (the calibration is tight)."""
    from scipy.stats import norm

    def profile(eps, sigma):
        return norm.cdf(0.5 / sigma - eps * sigma) - np.exp(eps) * norm.cdf(-0.5 / sigma - eps * sigma)

    request = ReleaseRequest(CorpusSource(corpus_file), VocabularyPolicy.public(WORDS), epsilon=epsilon, delta=delta,
                             n_topics=3, mechanism="dp-vem", release_anyway=True, seed=0)
    report = release(request, echo=lambda line: None).release.report
    entry = next(e for e in report.composition if e["name"] == "unit count")
    share = split_budget(request).count
    assert entry["sensitivity"] == 1.0 and report.neighbours == "add-remove"
    assert profile(share.epsilon, entry["sigma"]) <= share.delta * (1 + 1e-9)
    assert profile(share.epsilon, 0.99 * entry["sigma"]) > share.delta


def test_the_request_n_jobs_runs_dp_vem_threads(monkeypatch, corpus_file):
    """n_jobs of the release reaches dp-vem's E-step (-1: every core, joblib's convention), and 0 is refused."""
    import joblib

    from topicdp.pipeline import plan_request

    seen = []
    monkeypatch.setattr("topicdp.variational.unit_statistic",
                        lambda X, w, beta, alpha, **kw: seen.append(kw["n_jobs"]) or np.ones(beta.shape))
    release(_request(corpus_file, "dp-vem", n_jobs=3), echo=lambda line: None)
    assert seen and set(seen) == {3}
    request = _request(corpus_file, "dp-vem", n_jobs=-1)
    assert MECHANISMS["dp-vem"].estimator(plan_request(request), 10, None).n_jobs == joblib.cpu_count()
    with pytest.raises(ValueError, match="n_jobs"):
        _request(corpus_file, "dp-vem", n_jobs=0)


def test_a_random_start_dp_vem_plan_scales_its_forecast_by_the_random_start_agreement(corpus_file, few_draws):
    """dp-vem without a reference starts at random: its forecast is the closed form x RANDOM_START_AGREEMENT, and
    the plan prints that factor and what it is; for an output-perturbation baseline the factor is LDA_AGREEMENT.
    With a reference (a public start) the closed form is at LDA_AGREEMENT, printed as the closed form, and the
    simulation on the reference is what the plan details and decides on."""
    from topicdp.forecast import LDA_AGREEMENT, RANDOM_START_AGREEMENT

    for mechanism, agreement in (("dp-vem", RANDOM_START_AGREEMENT), ("gaussian-global", LDA_AGREEMENT)):
        lines: list[str] = []
        release(_request(corpus_file, mechanism), echo=lines.append)
        shown = [ln for ln in lines if "with its assumed topics x" in ln]
        assert shown and all(f"x {agreement:g}, how far" in ln for ln in shown), (mechanism, shown)
        assert any("noiseless topics agree with LDA's" in ln for ln in shown) is (agreement != LDA_AGREEMENT)
    lines = []
    result = release(_request(corpus_file, "dp-vem", reference=corpus_file), echo=lines.append)
    assert result.decision.forecasts["dp-vem"].agreement == LDA_AGREEMENT and result.decision.simulated
    assert any("(closed form; the simulation below decides)" in ln for ln in lines)
    simulated = next(i for i, ln in enumerate(lines) if ln.startswith("simulated on the public reference"))
    assert "simulated on the public reference" in lines[simulated + 3]  # its overlap line says how it was made


@pytest.mark.parametrize("name", ["max_docs_per_user", "max_tokens_per_doc", "max_tokens_per_user"])
def test_a_source_refuses_a_bound_below_one(name):
    with pytest.raises(ValueError, match=name):
        CorpusSource("embedded", **{name: 0})


def test_a_source_applies_every_bound_with_the_seed_it_is_given():
    from topicdp._names import BOUND_PARAMETERS
    from topicdp.corpus import Corpus, embedded_texts
    from topicdp.pipeline.sources import bounded as bound

    texts = embedded_texts()
    corpus = Corpus.from_texts(texts, [i % 40 for i in range(len(texts))], max_features=200)
    source = CorpusSource("embedded", max_docs_per_user=3, max_tokens_per_doc=40, max_tokens_per_user=60)
    bounded = bound(source, corpus, 7)
    direct = corpus.bound(3, 40, random_state=7, max_tokens_per_user=60)
    assert bounded.fingerprint() == direct.fingerprint()
    assert [getattr(bounded.log, name) for name in BOUND_PARAMETERS] == [3, 40, 60]
    assert bound(CorpusSource("embedded"), corpus, 7) is corpus


def test_the_simulation_fits_on_the_reference_bounded_as_the_private_corpus_and_scores_on_its_whole_text(
        corpus_file, monkeypatch, few_draws):
    """Under a per-user cap the simulated releases are fitted on the reference with each user's documents capped
    (its units like the private ones) and scored on all of them; the documents kept are a fixed choice, so the same
    seeded request releases the same topics twice."""

    seen: list = []
    real = forecast_module.forecast_on_reference

    def spy(model, reference, n_units, **kw):
        seen.append((reference, kw["score_on"]))
        return real(model, reference, n_units, **kw)

    monkeypatch.setattr(forecast_module, "forecast_on_reference", spy)
    request = _request(corpus_file, "dp-vem", reference=corpus_file)
    request = dataclasses.replace(request, source=dataclasses.replace(request.source, max_docs_per_user=1))
    first = release(request, echo=lambda line: None)
    fitted, scored = seen[-1]
    assert fitted.n_docs == fitted.n_users == 400 and scored.n_docs == 1200  # 400 users x 3 documents
    assert list(fitted.vocabulary) == list(scored.vocabulary)
    again = release(request, echo=lambda line: None)
    np.testing.assert_array_equal(first.release.topic_word, again.release.topic_word)


def test_with_a_reference_and_a_dp_vocabulary_the_simulation_runs_before_the_selection_and_again_after(
        corpus_file, monkeypatch, few_draws):
    """The words are a DP output not known before their spend: the first simulation runs on the reference's own most
    frequent words at the plan's forecast size, before the selection is spent, and says so; after the selection it
    runs again on the selected words. A refusal on the first one spends only the count."""
    from topicdp.pipeline import run as run_module

    seen: list = []
    real = forecast_module.forecast_on_reference
    ledgers: list = []
    real_select = run_module.select_words

    def select(source, plan, ledger, random_state, n_units):
        ledgers.append(ledger)
        return real_select(source, plan, ledger, random_state, n_units)

    monkeypatch.setattr(run_module, "select_words", select)

    def spy(model, reference, n_units, **kw):
        seen.append((tuple(reference.vocabulary), len(ledgers), kw["vocabulary_share"]))
        return real(model, reference, n_units, **kw)

    monkeypatch.setattr(forecast_module, "forecast_on_reference", spy)
    lines: list[str] = []
    result = release(_request(corpus_file, "dp-vem", reference=corpus_file), echo=lines.append)
    assert len(seen) == 2 and seen[0][1] == 0 and seen[1][1] == 1  # before the selection's spend, then after it
    assert seen[1][0] == tuple(result.release.vocabulary)
    assert any("standing in" in ln and "DP vocabulary" in ln and "before it is selected" in ln for ln in lines)
    assert any(ln.startswith(f"simulated on the public reference (the {len(seen[1][0])} selected words)")
               for ln in lines)
    assert result.decision.simulated and result.decision.forecast.method == "public-simulation"

    monkeypatch.setattr(forecast_module, "forecast_on_reference",
                        lambda *a, **k: dataclasses.replace(real(*a, **k), verdict="common words"))
    seen.clear()
    with pytest.raises(ReleaseRefused, match="simulation on the public reference.*common words") as caught:
        release(dataclasses.replace(_request(corpus_file, "dp-vem", reference=corpus_file), release_anyway=False),
                echo=lambda line: None)
    assert caught.value.spent == ("the unit count (epsilon=1.5, delta=5e-05)",)


def test_the_report_carries_the_figures_the_decision_rested_on_with_the_status_of_what_it_read(
        corpus_file, monkeypatch, few_draws):
    """The report's plan says what the decision read: the simulation's verdict, figures, draws readable and whether
    that count is on the edge, and whether the owner released a refused forecast anyway. Public where the plan read
    only stated parameters and public data (a stated count, a public word list, the reference); post-processing where
    it read a DP count or a DP vocabulary, as the mechanism it chose."""
    from topicdp.forecast import on_the_edge

    stated = ReleaseRequest(CorpusSource(corpus_file), VocabularyPolicy.public(WORDS), epsilon=30.0, delta=1e-3,
                            unit="user", n_units=400, n_topics=3, reference=corpus_file, seed=0)
    result = release(stated, echo=lambda line: None)
    report, forecast = result.release.report, result.decision.forecast
    decision = report.details["plan"]["decision"]
    readable = forecast.draw_verdicts.count("readable")
    assert decision["forecast"] == "public-simulation" and decision["verdict"] == forecast.verdict
    assert (decision["simulated_draws"], decision["simulated_readable"]) == (3, readable)
    assert decision["on_the_edge"] == on_the_edge(readable, 3) and decision["contrast"] == forecast.contrast
    assert decision["released_anyway"] is False
    for field in ("report.mechanism", "report.details.plan.decision", "report.details.plan.mechanism_choice"):
        assert report.published[field].startswith("public:"), field

    real = forecast_module.forecast_on_reference
    monkeypatch.setattr(forecast_module, "forecast_on_reference",
                        lambda *a, **k: dataclasses.replace(real(*a, **k), verdict="common words"))
    forced = release(dataclasses.replace(_request(corpus_file, "dp-vem", reference=corpus_file), mechanism=None),
                     echo=lambda line: None).release.report  # a DP count and a DP vocabulary
    assert forced.details["plan"]["decision"]["verdict"] == "common words"
    assert forced.details["plan"]["decision"]["released_anyway"] is True
    for field in ("report.mechanism", "report.details.plan.decision", "report.details.plan.mechanism_choice"):
        assert forced.published[field].startswith("post-processing:"), field
        assert "the DP unit count and the DP vocabulary" in forced.published[field]


def test_a_refusal_on_the_edge_says_so(corpus_file, monkeypatch, few_draws):
    """A refusal whose simulated draws are within one standard error of one half says it is on the edge (about as
    many releases would meet the targets as miss them); a clear one does not."""

    real = forecast_module.forecast_on_reference
    request = ReleaseRequest(CorpusSource(corpus_file), VocabularyPolicy.public(WORDS), epsilon=30.0, delta=1e-3,
                             unit="user", n_units=400, n_topics=3, reference=corpus_file, seed=0)
    for readable, edge in ((4, True), (0, False)):
        draws = ("readable",) * readable + ("common words",) * (9 - readable)
        monkeypatch.setattr(forecast_module, "forecast_on_reference", lambda *a, draws=draws, **k: dataclasses.replace(
            real(*a, **k), verdict="common words", draw_verdicts=draws))
        with pytest.raises(ReleaseRefused, match="lists of common words") as caught:
            release(request, echo=lambda line: None)
        assert ("on the edge: 4 of 9 simulated releases were readable" in str(caught.value)) == edge
        assert caught.value.spent == ()  # refused before any spend


def test_the_re_plan_prints_its_figures_on_the_selected_words(corpus_file, monkeypatch):
    """After the DP vocabulary, the re-plan says how many words it kept and the forecast's figures on them (overlap,
    contrast, verdict), then what they mean for the topics (the forecast's lines), not only a verdict."""
    import re

    monkeypatch.setattr("topicdp.vocabulary._select", lambda totals, sigma, tau, max_features, rng: tuple(WORDS[:45]))
    lines: list = []
    release(_request(corpus_file, "dp-vem"), echo=lines.append)
    at = next(i for i, line in enumerate(lines) if line.startswith("re-planned"))
    line = lines[at]  # the words kept, the mechanism, the forecast's two figures, then its verdict
    assert_facts(line, "45 selected words", "dp-vem", "overlap", "contrast", ordered=True)
    assert re.search(r"overlap with LDA \d\.\d\d", line) and re.search(r"contrast \d+\.\d\dx", line), line
    assert line.rsplit(": ", 1)[1] in ("readable", "marginal", "common words", "noise"), line
    assert any("expected top-10 overlap" in line for line in lines[at + 1:at + 5])


def test_too_few_units_are_advised_as_such_and_a_word_list_only_where_it_would_help():
    """Where a DP vocabulary cannot hold K words, the advice fits the cause: at a count where even a public word
    list leaves dp-vem's topics noise it says too few units and how many a release needs (at that many the forecast
    is no longer noise, at half of them it is); at a large count it advises the public word list."""
    import re

    from topicdp.pipeline import plan_request
    from topicdp.pipeline.plan import UnitCount, _few_words_advice

    plan = plan_request(ReleaseRequest(CorpusSource("embedded"), VocabularyPolicy.dp(max_features=2000), n_topics=10))
    few, many = (_few_words_advice(plan, UnitCount(n, "DP count", 29.0)) for n in (40, 100_000))
    assert few.startswith("too few users") and "give a public word list" not in few, few
    assert "give a public word list" in many and "too few" not in many, many
    needed = int(re.search(r"needs about ([\d,]+) users", few).group(1).replace(",", ""))

    def verdict(n: int) -> str:
        topics = plan.budget.topics
        return MECHANISMS["dp-vem"].forecast(epsilon=topics.epsilon, delta=topics.delta, unit="user",
                                             neighbours="add-remove", n_units=n, n_topics=10, n_words=2000).verdict

    assert verdict(needed) != "noise" and verdict(needed // 2) == "noise"


def test_a_dp_vocabulary_of_topical_words_is_not_forecast_as_common_words():
    """The contrast forecast reads the DP vocabulary's share of the owner's words only where the selection passes
    just words more than SHARE_COMMON_WORDS_ONLY of the units hold (its own forecast then says common words): a
    document-level selection on 47,210 documents keeping 1,267 of 5,000 words is read as topical (share 1, the
    decision is not 'common words'); a user-level one on 2,000 users keeping 44 is read as common words."""
    from topicdp.pipeline import decide, plan_request
    from topicdp.pipeline.plan import UnitCount, vocabulary_share
    from topicdp.vocabulary import SHARE_COMMON_WORDS_ONLY, forecast_vocabulary

    documents = plan_request(ReleaseRequest(CorpusSource("embedded"), VocabularyPolicy.dp(max_features=5000),
                                            unit="document", mechanism="dp-vem"))
    users = plan_request(ReleaseRequest(CorpusSource("embedded"), VocabularyPolicy.dp(max_features=5000),
                                        unit="user", n_units=2000, mechanism="dp-vem"))
    many, few = UnitCount(47_210, "DP count", 29.1), UnitCount(2_000, "stated")
    for plan, count, expect_common in ((documents, many, False), (users, few, True)):
        budget = plan.budget.vocabulary
        share = forecast_vocabulary(budget.epsilon, budget.delta, count.value, unit=str(plan.request.unit),
                                    neighbours=str(plan.request.neighbours), max_features=5000).share
        assert (share > SHARE_COMMON_WORDS_ONLY) == expect_common, share
    assert vocabulary_share(documents, 1267, many) == 1.0
    assert vocabulary_share(users, 44, few) == pytest.approx(44 / 5000)
    assert decide(documents, many, n_words=1267).forecast.verdict != "common words"


def test_a_users_own_model_is_released_through_the_request_and_its_changes_said_once(caplog):
    """The random-DP road over the user's scikit-learn LDA given as the request's TopicDP: P's topics start it
    (the stable form), the changes are logged once (before any fit), and the release says random DP, not DP."""
    import logging

    from sklearn.decomposition import LatentDirichletAllocation

    from topicdp import TopicDP
    from topicdp.samplers import SensitivitySampling

    mine = TopicDP(LatentDirichletAllocation(n_components=3, random_state=0),
                   sampling=SensitivitySampling(gamma=0.2, sizing="exchangeable", random_state=0))
    request = ReleaseRequest(CorpusSource("embedded"), VocabularyPolicy.from_texts(min_df=2), guarantee="random-dp",
                             reference="embedded", n_topics=3, agnostic=mine, release_anyway=True, seed=0)
    with caplog.at_level(logging.WARNING, logger="topicdp"):
        result = release(request, echo=lambda line: None)
    changes = [r.getMessage() for r in caplog.records if "became SklearnLDA" in r.getMessage()]
    assert len(changes) == 1 and "start: the model as given (random_state 0) fitted on P" in changes[0]
    assert result.release.report.guarantee == "random-DP" and result.release.report.gamma == 0.2


def test_the_template_is_checked_with_numpy_counts_and_rederived_by_replace():
    from sklearn.decomposition import LatentDirichletAllocation

    from topicdp import TopicDP

    base = {"source": CorpusSource("embedded"), "vocabulary": VocabularyPolicy.from_texts()}
    with pytest.raises(ValueError, match="n_components=5, the request n_topics=10"):
        ReleaseRequest(**base, agnostic=TopicDP(LatentDirichletAllocation(n_components=np.int64(5))))
    request = ReleaseRequest(**base)  # the default template: gensim LDA of K topics
    assert request.agnostic is None and request.topicdp.model.n_topics == 10
    assert dataclasses.replace(request, n_topics=20).topicdp.model.n_topics == 20


def test_a_bad_model_seed_is_refused_by_its_flag_before_anything_is_read(capsys):
    from topicdp.cli import main

    assert main(["privatize", "embedded", "--guarantee", "random-dp", "--private-oracle", "--model-seed", "-1"]) == 2
    assert "--model-seed must be an integer in [0, inf], got -1" in capsys.readouterr().err


def test_a_gensim_ldamodel_template_is_released_on_the_random_dp_road():
    """A gensim object has no get_params: the road copies it without scikit-learn's clone check."""
    from gensim.corpora import Dictionary
    from gensim.models import LdaModel

    from topicdp import TopicDP
    from topicdp.samplers import SensitivitySampling

    words = Dictionary([["public", "words"]])  # an id2word of the user's (the release uses the corpus' words)
    mine = TopicDP(LdaModel(id2word=words, num_topics=2, random_state=0, passes=1),
                   sampling=SensitivitySampling(gamma=0.2, sizing="exchangeable", random_state=0))
    request = ReleaseRequest(CorpusSource("embedded"), VocabularyPolicy.from_texts(min_df=2), guarantee="random-dp",
                             reference="embedded", n_topics=2, agnostic=mine, release_anyway=True, seed=0)
    result = release(request, echo=lambda line: None)
    assert result.release.report.guarantee == "random-DP" and result.release.topic_word.shape[0] == 2


def test_prepare_once_release_many_reads_the_reference_once_and_releases_as_release_does(corpus_file, monkeypatch,
                                                                                          few_draws):
    """release(request) is prepare then release_prepared: two releases of one prepared corpus read the public
    reference once between them, build P on the release's words and its public start once, and each releases the
    seeded topics release(request) releases, bit for bit."""
    from topicdp.pipeline import prepare, release_prepared
    from topicdp.pipeline import run as run_module

    reads: list = []
    real = run_module.read_reference
    monkeypatch.setattr(run_module, "read_reference", lambda r: reads.append(r.reference) or real(r))
    request = dataclasses.replace(_request(corpus_file, "dp-vem", reference=corpus_file),
                                  vocabulary=VocabularyPolicy.public(WORDS))
    alone = release(request, echo=lambda line: None)
    assert len(reads) == 1
    with prepare(request) as prepared:
        many = [release_prepared(prepared.plan, prepared, echo=lambda line: None) for _ in range(2)]
        kept = [key[0] for key in prepared._cache]
    assert len(reads) == 2  # once for release(), once for prepare()
    assert kept.count("text") == kept.count("bounded") == kept.count("start") == 1
    for result in many:
        np.testing.assert_array_equal(result.release.topic_word, alone.release.topic_word)



@pytest.mark.parametrize("stated", [None, 7])
def test_the_dp_vocabulary_takes_its_words_per_user_from_public_facts_unless_stated(stated, corpus_file, capsys):
    """The selection's ``k`` is the policy's, else :func:`topicdp.vocabulary.words_per_unit` at the decision's count
    and the vocabulary budget; the plan's lines give it, and the selection runs on it (its timing line)."""
    from topicdp.vocabulary import words_per_unit

    policy = VocabularyPolicy.dp(max_features=100, max_words_per_unit=stated)
    request = ReleaseRequest(CorpusSource(corpus_file), policy, epsilon=30.0, delta=1e-3, n_units=400, n_topics=3,
                             release_anyway=True, seed=0)
    lines: list[str] = []
    release(request, echo=lines.append)
    budget = split_budget(request).vocabulary
    expected = stated or words_per_unit(budget.epsilon, budget.delta, 400, str(request.neighbours))
    assert stated is not None or expected != 300  # the rule differs from the old fixed cap here
    assert any(f"{expected} words per user" in line for line in lines)
    assert f"each user's top {expected} words" in capsys.readouterr().err


def test_words_per_user_is_checked_and_only_for_a_dp_selection():
    with pytest.raises(ValueError, match="max_words_per_unit"):
        VocabularyPolicy.dp(max_words_per_unit=0)
    with pytest.raises(ValueError, match="max_words_per_unit applies to a DP selection"):
        VocabularyPolicy(kind="texts", max_words_per_unit=10)
