"""TopicDP takes the scikit-learn model a user already has, fitted or not: its class and parameters become the
toolkit's adapter, its fitted state is never used, and every change made to it for stability is listed."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.decomposition import NMF, LatentDirichletAllocation

from topicdp import Corpus, PrivacyLedger, SklearnLDA, SklearnNMF, TopicDP
from topicdp.adapters.wrap import wrap_model
from topicdp.datasets import synthetic_lda
from topicdp.samplers import PRIVATE_ORACLE, SensitivitySampling
from facts import assert_each, assert_facts, raises_facts


@pytest.fixture(scope="module")
def corpora() -> tuple[Corpus, Corpus]:
    """A private corpus of 20 users and a disjoint public reference with the same 30 words."""
    X = synthetic_lda(160, 30, 3, alpha0=1.0, mean_length=40, random_state=0).X.tocsr()
    vocab = [f"w{j}" for j in range(30)]
    return (Corpus.from_matrix(X[:80], vocab, np.arange(80) // 4),
            Corpus.from_matrix(X[80:], vocab, np.arange(80) // 4))


def _median_user_norm(corpus) -> float:
    """The median user's ||a_u||_2 (a_u: the user's summed counts), computed densely."""
    A = np.zeros((corpus.n_users, corpus.n_words))
    np.add.at(A, corpus.doc_users, corpus.X.toarray())
    return float(np.median(np.sqrt((A ** 2).sum(axis=1))))


def _sampling(reference) -> SensitivitySampling:
    return SensitivitySampling(distribution=reference, gamma=0.25, sizing="exchangeable", random_state=0)


def test_a_fitted_sklearn_lda_becomes_the_stable_adapter_and_every_change_is_listed(corpora, caplog):
    private, reference = corpora
    mine = LatentDirichletAllocation(n_components=3, random_state=0).fit(private.X)
    dp = TopicDP(mine, epsilon=3.0, unit="user", sampling=_sampling(reference), random_state=0)
    with caplog.at_level(logging.WARNING, logger="topicdp"):
        release = dp.fit(private).release_
    assert isinstance(dp.model_, SklearnLDA) and dp.model_.n_topics == 3 and dp.model_.random_state == 0
    params = dp.model_.params
    assert params["init"].shape == (3, 30) and params["max_iter"] == 3 and params["document_start"] == "constant"
    assert params["learning_method"] == "batch" and params["mean_change_tol"] == mine.mean_change_tol
    assert dp.model_.stability()[0] is True  # the stable form: no stability warning
    median_user = _median_user_norm(reference)
    assert params["max_user_norm"] == median_user
    assert_each(dp.model_changes_, [("start", "random_state 0", "fitted on P"),  # each setting: from -> to
                                    "max_iter 10 -> 3",
                                    ("document start", "-> constant"),
                                    ("user weight", f"at most {median_user:,.1f}", "median", "each topic")])
    notes = "\n".join(release.report.notes)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for change in dp.model_changes_:
        assert change in notes and change in logged
    assert_facts(notes, "sklearn.decomposition.LatentDirichletAllocation", "SklearnLDA", ordered=True)
    assert "NOT expected to be a stable" not in notes
    assert release.report.details["model"]["changes"] == dp.model_changes_
    assert release.report.guarantee == "random-DP"  # random DP, never stated as DP
    assert mine.get_params()["max_iter"] == 10 and dp.model is mine  # the user's object is not modified


def test_the_user_weight_is_read_from_p_cut_to_the_private_bounds_and_only_at_the_user_level(corpora):
    """P's median user is taken after P is cut as the private corpus was (its users as the neighbours can hold
    them); at the document level a user's tokens are no unit, and no weight is set."""
    private, reference = corpora
    lda = LatentDirichletAllocation(n_components=3, random_state=0)
    cut = reference.bound(max_docs_per_user=2, random_state=0)
    expected = _median_user_norm(cut)
    bounded = wrap_model(lda, reference=reference, vocabulary=private.vocabulary, bounds={"max_docs_per_user": 2})
    raw = wrap_model(lda, reference=reference, vocabulary=private.vocabulary)
    assert bounded.spec.params["max_user_norm"] == expected < raw.spec.params["max_user_norm"]
    document = wrap_model(lda, reference=reference, unit="document", vocabulary=private.vocabulary)
    assert document.spec.params["max_user_norm"] is None
    assert not any(change.startswith("user weight") for change in document.changes)


def test_the_fitted_state_is_never_used(corpora):
    """A fitted model, its unfitted clone and a fitted one whose topics were overwritten give the same f."""
    private, reference = corpora
    unfitted = LatentDirichletAllocation(n_components=3, random_state=0, learning_method="online")
    fitted = clone(unfitted).fit(private.X)
    tampered = clone(unfitted).fit(private.X)
    tampered.components_ = np.ones_like(tampered.components_)
    specs = [wrap_model(m, reference=reference).spec for m in (unfitted, fitted, tampered)]
    assert specs[0].fingerprint() == specs[1].fingerprint() == specs[2].fingerprint()
    assert np.array_equal(specs[0].fit_topic_word(private), specs[1].fit_topic_word(private))


def test_a_second_wrap_reuses_the_public_start_and_only_an_equal_definition_does(corpora, monkeypatch):
    """sample_sensitivity and fit wrap the model twice: the start (a deterministic fit on public P) is fitted once
    per P and definition, and a different seed, P or number of topics fits its own."""
    from sklearn.decomposition import _lda

    from topicdp.adapters import wrap

    private, reference = corpora
    fits = []
    real = _lda.LatentDirichletAllocation.fit
    monkeypatch.setattr(_lda.LatentDirichletAllocation, "fit", lambda self, X, *a, **k: fits.append(
        (self.random_state, X.shape)) or real(self, X, *a, **k))
    monkeypatch.setattr(wrap, "_STARTS", {})
    wrap_twice = [wrap_model(LatentDirichletAllocation(n_components=3, random_state=0), reference=reference,
                             vocabulary=private.vocabulary) for _ in range(2)]
    assert fits == [(0, reference.X.shape)]
    first, second = (w.spec.params["init"] for w in wrap_twice)
    assert np.array_equal(first, second) and first is not second  # a copy: one release cannot edit another's start
    assert np.array_equal(first, LatentDirichletAllocation(n_components=3, random_state=0).fit(reference.X)
                          .components_)  # the model as given, fitted on P
    for other, P in [(LatentDirichletAllocation(n_components=3, random_state=1), reference),
                     (LatentDirichletAllocation(n_components=2, random_state=0), reference),
                     (LatentDirichletAllocation(n_components=3, random_state=0, max_iter=4), reference),
                     (LatentDirichletAllocation(n_components=3, random_state=0), private)]:
        wrap_model(other, reference=P, vocabulary=private.vocabulary)
    assert len(fits) == 2 + 4  # the wrap and the check above, then one start per other definition


def test_online_learning_and_a_perplexity_stop_are_changed_and_said(corpora):
    _, reference = corpora
    mine = LatentDirichletAllocation(n_components=3, learning_method="online", max_iter=2, evaluate_every=2,
                                     n_jobs=2)
    wrapped = wrap_model(mine, reference=reference)
    assert_each(wrapped.changes[:-1], ["random_state None -> 0", "n_jobs 2 -> 1", ("start", "fitted on P"),
                                       "learning_method online -> batch", "evaluate_every 2 -> -1",
                                       ("document start", "-> constant")])
    assert wrapped.changes[-1].startswith("user weight: word counts -> a norm of at most ")
    assert wrapped.spec.params["max_iter"] == 2  # fewer iterations than the stable form's 3 are kept
    assert "n_jobs" not in wrapped.spec.get_params()


def test_keep_model_keeps_the_model_as_given_with_the_stability_warning(corpora, caplog):
    private, reference = corpora
    mine = LatentDirichletAllocation(n_components=3, random_state=0, max_iter=3)
    dp = TopicDP(mine, epsilon=3.0, sampling=_sampling(reference), keep_model=True, random_state=0)
    with caplog.at_level(logging.WARNING, logger="topicdp"):
        release = dp.fit(private).release_
    assert dp.model_changes_ == [] and dp.model_.get_params() == {
        "n_topics": 3, "random_state": 0, "init": None, "document_start": None, "max_user_norm": None,
        **{k: v for k, v in mine.get_params().items() if k not in ("n_components", "random_state", "n_jobs")}}
    assert dp.model_.params.get("init") is None
    notes = "\n".join(release.report.notes)
    assert "nothing changed" in notes and "NOT expected to be a stable function of the data" in notes
    assert "NOT expected to be a stable" in caplog.text


@pytest.mark.parametrize("keep_model", ["yes", 1, None])
def test_keep_model_must_be_a_bool(corpora, keep_model):
    private, _ = corpora
    dp = TopicDP(LatentDirichletAllocation(n_components=3), epsilon=1.0, sensitivity="global", keep_model=keep_model)
    with pytest.raises(TypeError, match="keep_model must be True or False"):
        dp.fit(private)


def test_no_stable_form_where_it_is_not_needed_or_has_no_public_start(corpora):
    """The global road's noise does not depend on stability; the private oracle has no public P to start from."""
    private, _ = corpora
    mine = LatentDirichletAllocation(n_components=3, random_state=0, max_iter=2)
    dp = TopicDP(mine, epsilon=1.0, sensitivity="global", random_state=0).fit(private, ledger=PrivacyLedger())
    assert dp.model_changes_ == [] and dp.model_.params.get("init") is None
    wrapped = wrap_model(mine, reference=None)
    assert wrapped.changes == () and "no public reference P was given" in wrapped.notes[0]
    oracle = TopicDP(mine, epsilon=3.0, sampling=SensitivitySampling(distribution=PRIVATE_ORACLE, gamma=0.25,
                                                             sizing="exchangeable", random_state=0), random_state=0)
    notes = "\n".join(oracle.fit(private, ledger=PrivacyLedger()).release_.report.notes)
    assert "no public reference P was given" in notes and "PRIVATE ORACLE" in notes


def test_nmf_is_carried_over_unchanged_and_says_it_has_no_stable_form(corpora):
    private, reference = corpora
    mine = NMF(n_components=3, init="nndsvd", max_iter=50, random_state=1).fit(private.X.astype(float))
    wrapped = wrap_model(mine, reference=reference)
    assert isinstance(wrapped.spec, SklearnNMF) and wrapped.changes == ()
    assert wrapped.spec.get_params() == {"n_topics": 3, "random_state": 1, "init_topics": None, "alpha_H": "same",
                                         "alpha_W": 0.0,
                                         "beta_loss": "frobenius", "init": "nndsvd", "l1_ratio": 0.0, "max_iter": 50,
                                         "shuffle": False, "solver": "cd", "tol": 0.0001, "verbose": 0}
    assert "no known stable form" in wrapped.notes[0]


@pytest.mark.parametrize("model, match", [
    (NMF(), "n_components cannot be carried over: got 'auto'"),
    (NMF(n_components=3, init="custom"), "init='custom' cannot be carried over"),
    (LatentDirichletAllocation(n_components=3, random_state=np.random.RandomState(0)),
     "random_state cannot be carried over: got RandomState"),
    (LatentDirichletAllocation(n_components=0), "n_components cannot be carried over: got 0"),
])
def test_a_parameter_that_cannot_be_carried_over_is_refused_by_name(model, match):
    with pytest.raises(ValueError, match=match):
        wrap_model(model)


def test_p_must_share_the_corpus_vocabulary_for_the_public_start(corpora):
    private, reference = corpora
    other = Corpus.from_matrix(reference.X, [f"v{j}" for j in range(30)], np.arange(80) // 4)
    dp = TopicDP(LatentDirichletAllocation(n_components=3, random_state=0), epsilon=3.0, sampling=_sampling(other))
    with pytest.raises(ValueError, match="P on the corpus' vocabulary"):
        dp.fit(private)


class MyLDA(LatentDirichletAllocation):
    pass


@pytest.mark.parametrize("model, extra", [
    (lambda corpus: None, "CallableModel(func, n_topics=K) wraps it"),
    (object(), "got builtins.object"),
    (MyLDA(n_components=3), "a subclass whose own behaviour the adapter would not keep"),
])
def test_anything_else_is_refused_saying_what_can_be_wrapped_and_why_not_fitted_state(corpora, model, extra):
    private, _ = corpora
    with pytest.raises(TypeError) as info:
        TopicDP(model, epsilon=1.0, sensitivity="global").fit(private)
    message = str(info.value)
    for part in ("LatentDirichletAllocation or NMF", "TopicModelSpec from topicdp.adapters", "SklearnLDA",
                 "CallableModel(func, n_topics)", "A fitted model's state is never used", "refits", extra):
        assert part in message


def test_get_params_shows_the_wrapped_model_and_clone_drops_its_fitted_state(corpora):
    private, _ = corpora
    mine = LatentDirichletAllocation(n_components=3, random_state=0, max_iter=2).fit(private.X)
    dp = TopicDP(mine, epsilon=1.0, sensitivity="global")
    params = dp.get_params(deep=True)
    assert params["model__n_components"] == 3 and params["model__max_iter"] == 2 and params["keep_model"] is False
    copy = clone(dp)
    assert not hasattr(copy.model, "components_") and copy.get_params()["model__max_iter"] == 2
    assert dp.set_params(model__max_iter=4) is dp and mine.max_iter == 4


def test_a_gensim_lda_is_read_back_from_its_attributes_without_its_id2word_or_learned_prior(corpora):
    gensim = pytest.importorskip("gensim")
    private, reference = corpora
    dictionary, bow = private.to_gensim()
    mine = gensim.models.LdaModel(bow, num_topics=3, id2word=dictionary, alpha="auto", passes=5, random_state=3)
    kept = wrap_model(mine, keep_model=True)
    assert isinstance(kept.spec, SklearnLDA) is False and kept.spec.n_topics == 3 and kept.spec.params["passes"] == 5
    assert kept.spec.get_params()["alpha"] == "symmetric" and any("alpha 'auto' -> symmetric" in c
                                                                  for c in kept.changes)
    assert kept.spec.get_params()["eval_every"] == 10 and kept.spec.get_params()["dtype"] is np.float32
    assert any("seed cannot be recovered -> 0" in c for c in kept.changes) and "id2word is not used" in kept.notes[0]
    stable = wrap_model(mine, reference=reference)
    assert stable.spec.stability()[0] is True and stable.spec.params["passes"] == 2
    for change in ("passes 5 -> 2", "update_every 1 -> 0", "dtype float32 -> float64",
                   "start: the model as given (seed 0) fitted on P", "user weight: word counts -> a norm of at most "):
        assert any(change in c for c in stable.changes)
    median_user = _median_user_norm(reference)
    assert stable.spec.params["max_user_norm"] == median_user
    # the start: the model as given (its configuration, seed 0) fitted on the public P, never its fitted topics
    given_on_p = wrap_model(mine, reference=reference, keep_model=True).spec.fit(reference).topic_word_
    assert np.array_equal(stable.spec.init, given_on_p)
    assert not np.allclose(stable.spec.init, mine.get_topics(), atol=1e-3)  # the fitted (private) topics: unused
    assert not any(c.startswith("alpha -") for c in stable.changes)
    multi = wrap_model(gensim.models.LdaMulticore(num_topics=3, id2word=dictionary, workers=2), keep_model=True)
    assert multi.spec.params["workers"] == 1 and any("workers 2 -> 1" in c for c in multi.changes)
    assert multi.spec.fit_topic_word(private).shape == (3, 30)


@pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")  # the clone's release is a second one of the data
def test_a_clone_of_topicdp_over_a_users_lda_releases_the_same(corpora):
    """clone(TopicDP(LatentDirichletAllocation(...))) copies the user's model (unfitted, its own n_components) and
    the options; with the same seeds it wraps the same spec, samples the same sensitivity and releases the same
    matrix (the sampled road, so f, P's pairs and the noise are all seeded)."""
    private, reference = corpora
    dp = TopicDP(LatentDirichletAllocation(n_components=3, random_state=0), epsilon=3.0, unit="user",
                 sampling=_sampling(reference), random_state=0)
    copy = clone(dp)
    assert copy.model is not dp.model and copy.get_params()["model__n_components"] == 3
    first = dp.fit(private, ledger=PrivacyLedger()).release_
    second = copy.fit(private, ledger=PrivacyLedger()).release_
    assert copy.model_.get_params().keys() == dp.model_.get_params().keys()
    assert copy.model_.fingerprint() == dp.model_.fingerprint() and copy.model_changes_ == dp.model_changes_
    assert first.report.details["model"] == second.report.details["model"]
    assert np.array_equal(first.topic_word, second.topic_word)
    assert first.report.guarantee == second.report.guarantee == "random-DP"  # random DP, never stated as DP


# --- tomotopy, gensim HDP and LSI, and the toolkit's own non-private estimators ---------------------------------------


def _tokens(corpus: Corpus) -> list[list[str]]:
    """The corpus' documents as token lists (each word repeated by its count), as a tomotopy user adds them."""
    X = corpus.X.tocsr()
    return [[corpus.vocabulary[j] for j, n in zip(X.indices[X.indptr[d]:X.indptr[d + 1]],
                                                   X.data[X.indptr[d]:X.indptr[d + 1]]) for _ in range(int(n))]
            for d in range(X.shape[0])]


def test_a_tomotopy_lda_is_read_from_its_constructor_arguments_not_its_training(corpora):
    tp = pytest.importorskip("tomotopy")
    from topicdp.adapters import TomotopyLDA

    private, reference = corpora
    untrained = tp.LDAModel(k=3, alpha=0.2, eta=0.05, seed=5, tw=tp.TermWeight.IDF, rm_top=1, min_cf=2)
    trained = tp.LDAModel(k=3, alpha=0.2, eta=0.05, seed=5, tw=tp.TermWeight.IDF, rm_top=1, min_cf=2)
    for words in _tokens(private):
        trained.add_doc(words)
    trained.train(20, workers=1)  # optim_interval 10: its alpha is now optimised on the private documents
    assert not np.allclose(trained.alpha, 0.2)
    wrapped = [wrap_model(m, reference=reference) for m in (untrained, trained)]
    assert wrapped[0].spec.fingerprint() == wrapped[1].spec.fingerprint()
    assert wrapped[0].changes == wrapped[1].changes and wrapped[0].notes == wrapped[1].notes
    spec = wrapped[1].spec
    assert isinstance(spec, TomotopyLDA) and spec.get_params() == {
        "n_topics": 3, "random_state": 5, "alpha": 0.2, "eta": 0.05, "tw": "idf", "rm_top": 1, "min_cf": 2,
        "min_df": 0, "optim_interval": 10, "burn_in": 0, "iterations": 200, "workers": 1}
    assert_each(wrapped[1].changes, [("iterations", "-> 200", "TomotopyLDA(..., iterations=N)")])
    assert "no known stable form" in wrapped[1].notes[-1]  # Gibbs sampling: kept as given even with P
    W = spec.fit_topic_word(private)
    assert W.shape == (3, 30) and np.allclose(W.sum(axis=1), 1)
    # rm_top=1 leaves the corpus' most frequent word out of every topic
    assert np.all(W[:, int(np.argmax(np.asarray(private.X.sum(axis=0)).ravel()))] == 0)


def test_a_tomotopy_seed_drawn_by_tomotopy_becomes_0_and_the_release_says_so(corpora):
    tp = pytest.importorskip("tomotopy")
    private, reference = corpora
    dp = TopicDP(tp.LDAModel(k=3), epsilon=3.0, sampling=_sampling(reference), random_state=0)
    release = dp.fit(private, ledger=PrivacyLedger()).release_
    assert dp.model_.random_state == 0 and dp.model_.get_params()["alpha"] == 0.1
    assert dp.model_changes_[0].startswith("seed None -> 0 (tomotopy drew one from std::random_device")
    notes = "\n".join(release.report.notes)
    assert "tomotopy.models.LDAModel became TomotopyLDA" in notes and dp.model_changes_[0] in notes
    assert "NOT expected to be a stable function of the data" in notes  # no stable form: the warning stays
    assert release.topic_word.shape == (3, 30) and release.report.guarantee == "random-DP"


@pytest.mark.parametrize("build, match", [
    (lambda tp: tp.LDAModel(k=3, alpha=[0.1, 0.2, 0.3]), "alpha cannot be carried over: got one value per topic"),
    (lambda tp: tp.LDAModel(k=3, transform=lambda kwargs: kwargs), "transform cannot be carried over"),
    (lambda tp: tp.LDAModel(k=3, seed=1).copy(), r"does not record its constructor's arguments.*pass TomotopyLDA"),
])
def test_a_tomotopy_setting_the_spec_cannot_honour_is_refused_naming_what_to_pass(build, match):
    tp = pytest.importorskip("tomotopy")
    with pytest.raises(ValueError, match=match):
        wrap_model(build(tp))


def test_a_gensim_hdp_and_lsi_are_read_back_from_their_attributes(corpora):
    gensim = pytest.importorskip("gensim")
    from topicdp.adapters import GensimHDP, GensimLSI

    private, reference = corpora
    dictionary, bow = private.to_gensim()
    hdp = [gensim.models.HdpModel(corpus, id2word=dictionary, T=6, K=4, kappa=0.8, tau=32.0, eta=0.02,
                                  random_state=3) for corpus in (None, bow)]
    wrapped = [wrap_model(m, reference=reference) for m in hdp]
    assert wrapped[0].spec.fingerprint() == wrapped[1].spec.fingerprint()  # the fitted HDP's state is not used
    spec = wrapped[1].spec
    assert isinstance(spec, GensimHDP) and spec.n_topics == 6 and spec.random_state == 0
    assert {k: spec.get_params()[k] for k in ("T", "K", "kappa", "tau", "eta")} == {
        "T": 6, "K": 4, "kappa": 0.8, "tau": 32.0, "eta": 0.02}  # gensim stores tau + 1: read back as given
    assert_facts(wrapped[1].changes[0], "random_state", "seed cannot be recovered", "-> 0", ordered=True)
    assert wrapped[1].changes[1].startswith("n_topics: HdpModel has no number of topics to release")
    assert spec.fit_topic_word(private).shape == (6, 30)
    lsi = [gensim.models.LsiModel(corpus, num_topics=3, id2word=dictionary, power_iters=3, random_seed=seed)
           for corpus, seed in ((None, 4), (bow, 4), (None, None))]
    wrapped = [wrap_model(m, reference=reference) for m in lsi]
    assert wrapped[0].spec.fingerprint() == wrapped[1].spec.fingerprint()
    spec = wrapped[1].spec
    assert isinstance(spec, GensimLSI) and spec.get_params() == {
        "n_topics": 3, "random_state": 4, "chunksize": 20000, "decay": 1.0, "onepass": True, "power_iters": 3,
        "extra_samples": 100, "dtype": np.float64}
    assert wrapped[1].changes == () and "no known stable form" in wrapped[1].notes[-1]
    assert wrapped[2].changes == ("random_seed None -> 0 (f must be deterministic)",)


def test_a_gensim_lsi_releases_and_an_hdp_time_limit_is_refused(corpora):
    gensim = pytest.importorskip("gensim")
    private, reference = corpora
    dictionary, _ = private.to_gensim()
    dp = TopicDP(gensim.models.LsiModel(num_topics=3, id2word=dictionary, random_seed=1), epsilon=3.0,
                 sampling=_sampling(reference), random_state=0)
    release = dp.fit(private, ledger=PrivacyLedger()).release_
    assert release.topic_word.shape == (3, 30) and release.report.guarantee == "random-DP"
    assert "gensim.models.lsimodel.LsiModel became GensimLSI" in "\n".join(release.report.notes)
    with raises_facts(ValueError, "max_time", "got 60", "HdpModel(max_time=None)", ordered=True):
        wrap_model(gensim.models.HdpModel(None, id2word=dictionary, max_time=60))


def test_the_toolkits_variational_lda_is_wrapped_by_get_params_in_its_stable_form(corpora):
    from topicdp.adapters import VariationalModel
    from topicdp.variational import VariationalLDA

    private, reference = corpora
    mine = VariationalLDA(3, n_iterations=3, warmup_iterations=1, e_step_max_iter=20, random_state=2)
    fitted = clone(mine).fit(private)
    kept = wrap_model(fitted, reference=reference, keep_model=True)
    assert isinstance(kept.spec, VariationalModel) and kept.wrapped and kept.changes == ()
    assert kept.spec.get_params() == {**mine.get_params(), "n_topics": 3, "random_state": 2}
    stable = [wrap_model(m, reference=reference, vocabulary=private.vocabulary) for m in (mine, fitted)]
    assert stable[0].spec.fingerprint() == stable[1].spec.fingerprint()  # fitted state not used
    assert stable[1].changes == ("start: topics fitted on P instead of random draws",
                                 "warmup_iterations 1 -> 0 (public topics need no warm-up)")
    assert stable[1].spec.stability()[0] is True and stable[1].spec.params["init"].shape == (3, 30)
    dp = TopicDP(VariationalLDA(3, n_iterations=3), epsilon=3.0, sampling=_sampling(reference), random_state=0)
    release = dp.fit(private, ledger=PrivacyLedger()).release_
    assert dp.model_changes_ == ["random_state None -> 0 (f must be deterministic)",
                                 "start: topics fitted on P instead of random draws"]
    notes = "\n".join(release.report.notes)
    assert "topicdp.variational.VariationalLDA became VariationalModel" in notes
    assert "NOT expected to be a stable" not in notes and release.report.guarantee == "random-DP"


def test_the_toolkits_spectral_lda_is_wrapped_by_get_params(corpora):
    from topicdp.adapters.spectral import SpectralModel
    from topicdp.spectral import SpectralLDA

    private, reference = corpora
    mine = SpectralLDA(3, alpha0=0.5, random_state=1, n_restarts=2)
    wrapped = [wrap_model(m, reference=reference) for m in (mine, clone(mine).fit(private.X))]
    assert wrapped[0].spec.fingerprint() == wrapped[1].spec.fingerprint()
    assert isinstance(wrapped[1].spec, SpectralModel) and wrapped[1].spec.get_params() == {
        "n_topics": 3, "random_state": 1, "alpha0": 0.5, "simplex": "project", "n_restarts": 2, "tol": 1e-6,
        "max_iter": 300}
    assert wrapped[1].changes == () and "no known stable form" in wrapped[1].notes[0]
    with pytest.raises(ValueError, match="random_state cannot be carried over: got Generator"):
        wrap_model(SpectralLDA(3, random_state=np.random.default_rng(0)))


def test_a_private_estimator_or_a_library_subclass_is_refused_naming_what_can_be_wrapped(corpora):
    from topicdp.variational import DPVariationalEM

    private, _ = corpora
    refused = [(DPVariationalEM(3), "already a private estimator: fit it directly")]
    tp = pytest.importorskip("tomotopy")
    refused.append((tp.HDPModel(), "a subclass whose own behaviour the adapter would not keep"))
    for model, extra in refused:
        with pytest.raises(TypeError) as info:
            TopicDP(model, epsilon=1.0, sensitivity="global").fit(private)
        for part in ("gensim LdaModel, LdaMulticore, HdpModel or LsiModel", "a tomotopy LDAModel",
                     "topicdp.variational.VariationalLDA", "topicdp.spectral.SpectralLDA", "CallableModel", extra):
            assert part in str(info.value)


@pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")  # the clone's release is a second one of the data
def test_a_topicdp_over_a_tomotopy_model_clones_and_releases_through_the_pipeline_road(corpora):
    """A tomotopy model cannot be pickled, so scikit-learn's clone (a deep copy of a non-estimator parameter) failed
    on it; the clone shares the object (TopicDP only reads its configuration) and releases as the original does."""
    tp = pytest.importorskip("tomotopy")
    private, reference = corpora
    dp = TopicDP(tp.LDAModel(k=3, seed=1), epsilon=3.0, unit="user", sampling=_sampling(reference), random_state=0)
    copy = clone(dp)
    assert copy is not dp and copy.model is dp.model and copy.get_params(deep=False).keys() == dp.get_params(
        deep=False).keys()
    assert copy.sampling is not dp.sampling and copy.sampling.gamma == dp.sampling.gamma
    a, b = dp.fit(private).release_, copy.fit(private).release_
    np.testing.assert_array_equal(a.topic_word, b.topic_word)
