"""Every entry point runs one plan: ``topicdp privatize``, :func:`topicdp.release` and a planned estimator's ``fit``
(on the file, or on a :class:`topicdp.Corpus` built on the public words) refuse with the same figures before the
topics' budget is spent, and forced, release the same matrix bit for bit (same seed)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

import topicdp
from topicdp._argparse import cli_words
from topicdp.cli import main
from topicdp.pipeline import ReleaseRefused

from corpora import WORDS, write_three_block_files

#: 400 users x 3 documents at epsilon 0.05: the DP count (epsilon 0.0025) and dp-vem's forecast are far from readable
#: (the forecast's noise must shrink about 1,000x), so every entry point refuses; forced, all draw the same noise
OPTIONS = dict(n_topics=3, epsilon=0.05, max_docs_per_user=2)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_three_block_files(tmp_path_factory.mktemp("entry_points"))


def _command(files, *extra) -> list[str]:
    return ["privatize", str(files / "corpus.jsonl"), "--topics", "3", "--epsilon", "0.05", "--max-docs-per-user", "2",
            "--vocabulary", str(files / "words.txt"), "--mechanism", "dp-vem", "--seed", "0", *extra]


def _entry_points(files, **forced):
    """Each Python entry point as a function returning its release (or raising its refusal)."""
    path, words = str(files / "corpus.jsonl"), str(files / "words.txt")
    corpus = topicdp.Corpus.from_jsonl(path, vocabulary=WORDS)  # the README's recipe: a Corpus on public words
    return {
        "topicdp.release": lambda: topicdp.release(path, **OPTIONS, vocabulary=words, mechanism="dp-vem", seed=0,
                                                   echo=logging.getLogger("topicdp").info, **forced),
        "fit(file)": lambda: topicdp.DPVariationalLDA(**OPTIONS, vocabulary=words, random_state=0,
                                                      **forced).fit(path).release_,
        "fit(Corpus)": lambda: topicdp.DPVariationalLDA(**OPTIONS, random_state=0, **forced).fit(corpus).release_,
    }


def _figures(lines) -> list[str]:
    """The plan's figures as printed: its DP count line and dp-vem's forecast lines (the prefix of a printed line and
    the seconds a proposal's search took are dropped)."""
    lines = [line.removeprefix("topicdp: ").strip() for line in lines]
    return [line for line in lines if line.startswith(("plan: dp-vem", "forecast dp-vem", "per-entry noise"))]


def test_every_entry_point_refuses_with_the_commands_figures(files, capsys, caplog):
    assert main(_command(files)) == 2
    printed = capsys.readouterr()
    error = printed.err.strip().splitlines()[-1]
    refusals, figures = {}, {}
    for name, run in _entry_points(files).items():
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="topicdp"), pytest.raises(ReleaseRefused) as caught:
            run()
        refusals[name], figures[name] = caught.value, _figures(caplog.messages)
    assert len({str(r) for r in refusals.values()}) == 1  # the same sentence and spent budget
    refused = refusals["fit(Corpus)"]
    assert error == f"topicdp: error: {cli_words(str(refused))}"
    assert refused.spent == ("the unit count (epsilon=0.0025, delta=5e-08)",) and "not spent" in str(refused)
    command = _figures((printed.out + printed.err).splitlines())
    assert len(command) == 3 and command[0].startswith("plan: dp-vem (named by the caller); about ")
    assert all(shown == command for shown in figures.values()), figures  # the DP count and the forecast, as printed


def test_forced_every_entry_point_releases_the_commands_matrix_bit_for_bit(files, tmp_path, capsys):
    assert main(_command(files, "--release-anyway", "--out", str(tmp_path / "command.json"))) == 0
    capsys.readouterr()
    command = json.loads((tmp_path / "command.json").read_text())
    for name, run in _entry_points(files, release_anyway=True).items():
        released = run()
        assert np.array_equal(released.topic_word, np.asarray(command["topic_word"])), name
        assert released.to_dict() == command, name  # the published file whole: topics, words, report


def test_a_planned_fit_charges_the_ledger_as_the_command(files, tmp_path, capsys):
    from topicdp.rdp import PrivacyLedger

    paths = [str(tmp_path / f"{name}.ledger") for name in ("fit", "command")]
    for path in paths:
        PrivacyLedger.open(path, budget=(3.0, 1e-5), unit="user", neighbours="add-remove")
    with pytest.raises(ReleaseRefused):
        topicdp.DPVariationalLDA(**OPTIONS, vocabulary=str(files / "words.txt"), random_state=0,
                                 ledger=paths[0]).fit(str(files / "corpus.jsonl"))
    assert main(_command(files, "--ledger", paths[1])) == 2
    ours, theirs = (PrivacyLedger.open(p).file.state().records for p in paths)
    assert [(r["type"], r.get("status"), r["entries"]) for r in ours] == [
        (r["type"], r.get("status"), r["entries"]) for r in theirs]


def test_the_fitted_attributes_are_the_release(files):
    est = topicdp.DPVariationalLDA(**OPTIONS, random_state=0, release_anyway=True)
    corpus = topicdp.Corpus.from_jsonl(str(files / "corpus.jsonl"), vocabulary=WORDS)
    est.fit(corpus)
    assert est.report_ is est.release_.report and est.vocabulary_ == tuple(WORDS) and est.n_features_in_ == 60
    assert est.decision_.mechanism == "dp-vem" and est.report_.unit == "user"
    theta = est.transform(corpus)
    assert theta.shape == (corpus.n_docs, 3) and np.allclose(theta.sum(axis=1), 1.0)


def test_a_corpus_whose_words_came_from_its_own_texts_is_refused(files):
    corpus = topicdp.Corpus.from_jsonl(str(files / "corpus.jsonl"))  # vocabulary built from the private texts
    with pytest.raises(ValueError, match=r"vocabulary: .*own private texts"):
        topicdp.DPVariationalLDA(**OPTIONS, release_anyway=True).fit(corpus)
    with pytest.raises(ValueError, match="vocabulary: a topicdp.Corpus is released on its own columns"):
        topicdp.DPVariationalLDA(**OPTIONS, vocabulary=WORDS).fit(corpus.bound(1))
    with pytest.raises(ValueError, match="user_fraction"):
        topicdp.DPVariationalLDA(**OPTIONS, user_fraction=0.5).fit(
            topicdp.Corpus.from_jsonl(str(files / "corpus.jsonl"), vocabulary=WORDS))


@pytest.mark.parametrize("params, message", [
    ({"random_state": -1}, "random_state"),
    ({"random_state": np.random.default_rng(0)}, "random_state must be None or an int"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"max_docs_per_user": 0}, "max_docs_per_user"),
    ({"unit": "user"}, "unit='user' needs a topicdp.Corpus"),
])
def test_bad_parameters_are_refused_by_name(params, message):
    X = np.ones((5, 4), dtype=int)
    with pytest.raises((ValueError, TypeError), match=message):
        topicdp.DPVariationalLDA(2, **{"unit": "document", **params}).fit(X)


def test_planned_spectral_dp_needs_the_stated_count_and_dpsvi_documents(files):
    path, words = str(files / "corpus.jsonl"), str(files / "words.txt")
    with pytest.raises(ValueError, match="n_units"):  # replace-one: refused before anything is read
        topicdp.SpectralDP(3, epsilon=3.0, vocabulary=words).fit(path)
    with pytest.raises(ReleaseRefused, match="does not have the 401 users"):
        topicdp.SpectralDP(3, epsilon=3.0, n_units=401, vocabulary=words).fit(path)
    with pytest.raises(ValueError, match="configuration must be one of 1, 2, 3, 4; got 5"):
        topicdp.SpectralDP(3, configuration=5, n_units=400, vocabulary=words).fit(path)
    forced = topicdp.SpectralDP(3, epsilon=3.0, n_units=400, vocabulary=words, random_state=0,
                                release_anyway=True).fit(path)
    assert forced.decision_.mechanism == "spectral-config-1" and forced.report_.neighbours == "replace-one"
    with pytest.raises(ValueError, match="dpsvi protects documents only"):
        topicdp.DPSVI(3, unit="user", vocabulary=words).fit(path)
    assert topicdp.DPSVI(3, epsilon=3.0, vocabulary=words, random_state=0).fit(path).report_.unit == "document"


def test_the_top_level_exports_the_planned_estimators():
    from topicdp.estimators import DPSVI, DPVariationalLDA, SpectralDP

    assert (topicdp.DPVariationalLDA, topicdp.SpectralDP, topicdp.DPSVI) == (DPVariationalLDA, SpectralDP, DPSVI)
    assert not {"DPVariationalEM", "DPSpectralMoments", "DPStochasticVI"} & set(topicdp.__all__)
