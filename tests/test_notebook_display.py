"""A release and its report in a notebook: rich displays (headline first, the view inline), to_sklearn, progress."""

import dataclasses
import html
import logging
import re

import numpy as np
import pytest

from facts import assert_facts
from topicdp.private_release import PrivateRelease
from reports import make_report

VOCABULARY = ("goal", "match", "bake", "oven", "vote", "poll", "stock", "bond", "rain", "snow")
W = np.array([[0.4, 0.3, 0.05, 0.05, 0.04, 0.04, 0.03, 0.03, 0.03, 0.03],
              [0.02, 0.03, 0.5, 0.25, 0.05, 0.05, 0.03, 0.03, 0.02, 0.02],
              [0.0, 0.01, 0.01, 0.02, 0.3, 0.3, 0.16, 0.1, 0.05, 0.05]])
FORCED = {"plan": {"decision": {"verdict": "common words", "released_anyway": True, "forecast": "public-simulation",
                                "overlap_with_lda": 0.21, "contrast": 0.01, "simulated_draws": 3,
                                "simulated_readable": 1, "on_the_edge": False}}}


def _release(details=None, **fields):
    published = {"topic_word": "DP", "noisy": "DP", "vocabulary": "public: a public word list"}
    if details:
        published["report.details.plan"] = "public: the plan's choices"
    report = make_report(mechanism="test-mechanism", guarantee="approx-DP", unit="user", neighbours="add-remove",
                         epsilon=3.0, delta=1e-6, seeded=False, published=published, details=details or {}, **fields)
    return PrivateRelease(topic_word=W, noisy=W, vocabulary=VOCABULARY, report=report,
                          nonprivate=np.full_like(W, 0.0123456789012345), diagnostics={"secret": "PLANTED-DIAGNOSTIC"})


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


# -- the release's display -----------------------------------------------------------------------------

def test_release_html_opens_on_the_guarantee_then_embeds_the_view_offline():
    release = _release()
    out = release._repr_html_()
    at = out.index("guarantee: (3, 1e-06)-DP")  # the headline, up to its tag's end, before the view
    assert at < out.index("<iframe")
    assert_facts(out[at:out.index("<", at)], "each user", "add-remove", "(certified)", ordered=True)
    page = html.unescape(re.search(r'srcdoc="([^"]*)"', out).group(1))
    assert page.startswith("<!DOCTYPE html>") and 'id="topicdp-view-data"' in page  # topicdp.view's page, whole
    assert "http://" not in out and "https://" not in out and " src=" not in out  # nothing fetched
    assert "PLANTED-DIAGNOSTIC" not in page and "0.0123456789" not in page  # the published part only
    assert "forced" not in _text(out).lower() and "release_anyway" not in out


def test_a_forced_release_says_so_in_the_headline_of_every_display():
    release = _release(details=FORCED)
    line = release.report.released_against_forecast()
    assert "released against the plan's forecast" in line and "common words" in line
    assert "overlap with LDA 0.21" in line and "1 of 3 simulated releases readable" in line
    out = release._repr_html_()
    assert out.index("guarantee: (3, 1e-06)-DP") < out.index("released against the plan&#x27;s forecast") \
        < out.index("<iframe")
    page = html.unescape(re.search(r'srcdoc="([^"]*)"', out).group(1))
    assert 'id="forced"' in page and "released against the plan's forecast" in _text(page)  # the view's header too
    report_html = release.report._repr_html_()
    assert _text(report_html).split("released against")[0].strip().startswith("guarantee: (3, 1e-06)-DP")
    markdown = release._repr_markdown_()
    assert markdown.splitlines()[2].startswith("**released against the plan's forecast")
    assert release.report.summary().splitlines()[1].startswith("forced               released against")
    assert "FORCED" in repr(release.report)
    # a decision that did not force says nothing
    unforced = _release(details={"plan": {"decision": {"verdict": "readable", "released_anyway": False}}})
    assert unforced.report.released_against_forecast() is None and "against" not in unforced._repr_html_()


def test_report_displays_are_the_summary_headline_first():
    report = _release().report
    out = report._repr_html_()
    assert _text(out).split()[:2] == ["guarantee:", "(3,"]
    for line in report.summary().splitlines()[1:]:
        assert html.escape(line) in out
    markdown = report._repr_markdown_()
    assert markdown.startswith("**guarantee: (3, 1e-06)-DP for each user") and "mechanism            test-mechanism" in markdown
    shown = repr(report)
    assert shown.startswith("<PrivacyReport: (3, 1e-06)-DP") and shown.endswith(">") and "\n" not in shown
    assert_facts(shown, "each user", "add-remove", "(certified)", "mechanism test-mechanism", ordered=True)


def test_release_markdown_shows_the_guarantee_and_top_words():
    markdown = _release()._repr_markdown_()
    assert markdown.startswith("**guarantee: (3, 1e-06)-DP")
    assert "  topic 0: goal match bake oven vote poll stock bond" in markdown
    assert "PLANTED-DIAGNOSTIC" not in markdown


def test_a_release_the_view_cannot_draw_still_shows_its_guarantee():
    zero_row = np.vstack([W[:2], np.zeros(10)])
    release = dataclasses.replace(_release(), topic_word=zero_row, noisy=zero_row)
    out = release._repr_html_()
    assert "guarantee: (3, 1e-06)-DP" in out and "the view could not be drawn" in out and "<iframe" not in out


def test_two_views_in_one_notebook_do_not_share_element_ids():
    """Each view lives in its own iframe document, so its ids (#map, #bars) and its CSS stay there."""
    out = _release()._repr_html_() + _release(details=FORCED)._repr_html_()
    outside = re.sub(r'srcdoc="[^"]*"', "", out)
    assert 'id="map"' not in outside and "<style" not in outside and "<script" not in outside


# -- to_sklearn ---------------------------------------------------------------------------------------------

def test_to_sklearn_gives_a_fitted_lda_on_the_released_topics():
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.utils.validation import check_is_fitted

    release = _release()
    lda = release.to_sklearn()
    assert isinstance(lda, LatentDirichletAllocation)
    check_is_fitted(lda)
    assert lda.n_components == 3 and lda.n_features_in_ == 10 and not hasattr(lda, "feature_names_in_")
    assert np.allclose(lda.components_ / lda.components_.sum(axis=1, keepdims=True), release.topic_word)
    assert np.allclose(lda.components_.sum(axis=1), 10.0)  # default pseudo-counts: V, an entry of about 1
    assert np.array_equal(lda.exp_dirichlet_component_, release.topic_word)
    assert (lda.doc_topic_prior_, lda.topic_word_prior_) == (1 / 3, 1 / 3)
    assert (lda.n_iter_, lda.n_batch_iter_) == (0, 0) and np.isnan(lda.bound_)

    texts = ["goal goal match rain", "bake oven oven snow", "vote poll stock bond bond", "nothing known here"]
    X = CountVectorizer(vocabulary=release.vocabulary).transform(texts)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name warning on a vectorizer's sparse output
        theta = lda.transform(X)
    assert theta.shape == (4, 3) and np.allclose(theta.sum(axis=1), 1.0)
    assert list(theta[:3].argmax(axis=1)) == [0, 1, 2]
    assert np.abs(theta - release.transform(X)).max() < 0.01  # the same fold-in into the released topics
    assert len(lda.get_feature_names_out()) == 3


def test_to_sklearn_options_and_their_checks():
    import pandas as pd  # noqa: F401  (feature names: a DataFrame whose columns are the words)

    release = _release()
    lda = release.to_sklearn(pseudo_counts=500.0, doc_topic_prior=0.1, feature_names=True)
    assert np.allclose(lda.components_.sum(axis=1), 500.0) and lda.doc_topic_prior_ == 0.1
    assert list(lda.feature_names_in_) == list(VOCABULARY)
    frame = pd.DataFrame([[2, 1, 0, 0, 0, 0, 0, 0, 1, 0]], columns=list(VOCABULARY))
    assert np.allclose(lda.transform(frame).sum(), 1.0)
    with pytest.raises(ValueError, match="pseudo_counts"):
        release.to_sklearn(pseudo_counts=0)
    with pytest.raises(TypeError, match="feature_names"):
        release.to_sklearn(feature_names="yes")


def test_to_sklearn_reads_only_the_published_part(tmp_path):
    path = tmp_path / "release.json"
    _release().save(path)
    loaded = PrivateRelease.load(path)
    assert np.allclose(loaded.to_sklearn().components_, _release().to_sklearn().components_)


# -- progress from Python ------------------------------------------------------------------------------------

def test_progress_lines_reach_stderr_without_logging_set_up(monkeypatch, capsys):
    """A script (stderr not a terminal, no handler on the topicdp logger) sees the lines with an ETA; progress=False
    and TOPICDP_PROGRESS=0 silence them; a logging handler that shows INFO gets them instead, once."""
    from topicdp import _progress
    from topicdp.rdp import PrivacyLedger
    from topicdp.variational import DPVariationalEM

    monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: False)
    monkeypatch.setattr(_progress, "_logger_shows_info", lambda: False)
    monkeypatch.delenv(_progress.PROGRESS_ENV, raising=False)
    X = np.random.default_rng(0).poisson(1.0, size=(60, 8))
    model = DPVariationalEM(2, epsilon=1.0, unit="document", n_iterations=3, random_state=0)
    model.fit(X, ledger=PrivacyLedger())  # a ledger per fit: these fits are not repeated releases of one budget
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("topicdp: dp-vem passes")]
    assert [line.split()[3] for line in lines] == ["1/3,", "2/3,", "3/3,"]
    assert all("elapsed" in line and re.search(r"ETA \d\d:\d\d:\d\d UTC", line) for line in lines)

    model.set_params(progress=False).fit(X, ledger=PrivacyLedger())
    assert "dp-vem passes" not in capsys.readouterr().err
    monkeypatch.setenv(_progress.PROGRESS_ENV, "0")
    model.set_params(progress=True).fit(X, ledger=PrivacyLedger())  # the session's switch wins
    assert "dp-vem passes" not in capsys.readouterr().err
    monkeypatch.setenv(_progress.PROGRESS_ENV, "sometimes")
    with pytest.raises(ValueError, match="TOPICDP_PROGRESS"):
        model.set_params(progress=None).fit(X, ledger=PrivacyLedger())
    with pytest.raises(TypeError, match="progress"):
        DPVariationalEM(2, unit="document", progress="yes").fit(X, ledger=PrivacyLedger())


def test_progress_is_a_tqdm_auto_bar_in_a_notebook(monkeypatch, caplog):
    from topicdp import _progress

    monkeypatch.setattr(_progress, "in_notebook", lambda: True)
    monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: False)
    with caplog.at_level(logging.INFO, logger="topicdp"):
        bar = _progress.Progress(4, "sensitivity pairs", bar=True)
        for _ in range(4):
            bar.update()
        bar.close()
    assert bar._bar is not None and bar._bar.n == 4 and not caplog.records
    quiet = _progress.Progress(4, "sensitivity pairs", bar=False)
    assert quiet._bar is None  # progress=False: no bar even in a notebook


def _a_script_with_a_sampler(monkeypatch):
    """A script's setting (stderr not a terminal, no handler, no switch) and a small corpus, a deterministic
    callable model and an exchangeable sampling of it."""
    from topicdp import CallableModel, embedded_corpus
    from topicdp import _progress
    from topicdp.samplers import PRIVATE_ORACLE, SensitivitySampling

    monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: False)
    monkeypatch.setattr(_progress, "_logger_shows_info", lambda: False)
    monkeypatch.delenv(_progress.PROGRESS_ENV, raising=False)
    corpus = embedded_corpus().subset_documents(np.arange(30))
    model = CallableModel(lambda c: np.tile(np.asarray(c.X.sum(axis=0)).ravel() + 1.0, (2, 1)), 2, name="counts")
    sampling = SensitivitySampling(PRIVATE_ORACLE, 0.2, "exchangeable", random_state=0)
    return corpus, model, sampling


def test_the_sampler_shows_its_forecast_and_pairs_unless_switched_off(monkeypatch, capsys):
    from topicdp.samplers import PRIVATE_ORACLE, SensitivitySampling, sample_sensitivity

    corpus, model, sampling = _a_script_with_a_sampler(monkeypatch)
    sample_sensitivity(model, corpus, sampling, fit_seconds=0.01)
    err = capsys.readouterr().err
    assert "topicdp: sensitivity sampling: h=4 pairs" in err and "ETA" in err
    assert "topicdp: sensitivity pairs 4/4" in err
    sample_sensitivity(model, corpus, SensitivitySampling(PRIVATE_ORACLE, 0.2, "exchangeable", random_state=0,
                                                          progress=False), fit_seconds=0.01)
    assert "topicdp:" not in capsys.readouterr().err
    with pytest.raises(TypeError, match="progress"):
        SensitivitySampling(PRIVATE_ORACLE, 0.2, progress="bar")


def test_topicdp_shows_each_long_step_in_order(monkeypatch, capsys):
    """The wrap recipe's steps from Python: the two fits on the private corpus, the sampler's forecast with its ETA,
    then the pairs."""
    from topicdp import TopicDP
    from topicdp.rdp import PrivacyLedger

    corpus, model, sampling = _a_script_with_a_sampler(monkeypatch)
    TopicDP(model, epsilon=1.0, delta=1e-4, sampling=sampling).fit(corpus, ledger=PrivacyLedger())
    err = capsys.readouterr().err
    fits = "topicdp: TopicDP: two fits of the callable model on the private corpus (f must be deterministic)"
    steps = [f"{fits} ...", f"{fits}: done in",
             "topicdp: sensitivity sampling: h=4 pairs", "topicdp: sensitivity pairs 1/4", "topicdp: sensitivity pairs 4/4"]
    at = [err.find(step) for step in steps]
    assert all(i >= 0 for i in at) and at == sorted(at), err
