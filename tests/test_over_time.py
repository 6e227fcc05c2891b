"""Topics released over time: periods stated by the owner, the budget split across them, the ledger's
parallel composition at the document level, topics matched across periods."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from topicdp.rdp import BudgetExceededError, GaussianEntry, PrivacyLedger


@pytest.fixture(scope="module")
def dated(tmp_path_factory):
    """The themed corpus (known topics) as JSON Lines, each document dated in one of three months."""
    from topicdp.datasets import themed_corpus, themed_vocabulary

    corpus, _ = themed_corpus(n_users=600, docs_per_user=6)
    directory = tmp_path_factory.mktemp("dated")
    vocabulary, X = list(corpus.vocabulary), corpus.X.tocsr()
    with open(directory / "dated.jsonl", "w") as fh:
        for i in range(X.shape[0]):
            row = X.getrow(i)
            text = " ".join(vocabulary[j] for j, n in zip(row.indices, row.data) for _ in range(int(n)))
            fh.write(json.dumps({"user": int(corpus.doc_users[i]), "date": f"2004-{5 + i % 3:02d}-0{1 + i % 9}",
                                 "text": text}) + "\n")
        fh.write(json.dumps({"user": 0, "date": "2004-09-01", "text": "outside the stated range"}) + "\n")
    return str(directory / "dated.jsonl"), themed_vocabulary()


def _request(path, words, ledger, unit, **kwargs):
    from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy

    return ReleaseRequest(CorpusSource(path), VocabularyPolicy.public(words), epsilon=3.0, delta=1e-6, unit=unit,
                          mechanism="dp-vem", ledger=ledger, n_jobs=1, seed=5, **kwargs)


def test_periods_are_stated_and_labelled():
    from topicdp.pipeline.over_time import PeriodSpec, period_of

    assert PeriodSpec("quarter", "2000Q1", "2002Q1").labels[::4] == ["2000Q1", "2001Q1", "2002Q1"]
    assert PeriodSpec("month", "2004-11", "2005-02").labels == ["2004-11", "2004-12", "2005-01", "2005-02"]
    assert period_of("2001-08-31T23:59:00Z", "quarter") == "2001Q3" and period_of("2004-05-01", "month") == "2004-05"
    with pytest.raises(ValueError, match="period must be one of"):
        PeriodSpec("week", "2004-05", "2004-06")
    with pytest.raises(ValueError, match="not be before"):
        PeriodSpec("month", "2004-06", "2004-05")
    with pytest.raises(ValueError, match="quarter label"):
        PeriodSpec("quarter", "2000-01", "2000-03")


def test_document_periods_compose_in_parallel(dated, tmp_path):
    from topicdp.pipeline.over_time import PeriodSpec, release_over_time

    path, words = dated
    ledger = str(tmp_path / "doc.ledger")
    PrivacyLedger.open(ledger, budget=(3.0, 1e-5), unit="document", neighbours="add-remove")
    result = release_over_time(_request(path, words, ledger, "document"), PeriodSpec("month", "2004-05", "2004-07"),
                               echo=lambda line: None)
    assert sorted(result.releases) == ["2004-05", "2004-06", "2004-07"] and not result.refused
    assert result.budget[:2] == (3.0, 1e-6)
    reread = PrivacyLedger.open(ledger)
    one = PrivacyLedger()
    one._entries = [e for e in reread.records if e.partition == "2004-05"]
    assert len(reread) == 6 and reread.epsilon(1e-5, "exact") == pytest.approx(one.epsilon(1e-5, "exact"))
    summary = reread.file.summary(PrivacyLedger)
    assert summary["dp"]["basic"] == {"epsilon": 3.0, "delta": 1e-6}  # the largest period, not the sum
    # the topics keep their index: matched topics of consecutive periods share their top word
    top = result.top_words(1)
    same = np.mean([top["2004-05"][k] == top["2004-07"][k] for k in range(10)])
    assert same >= 0.7


def test_user_periods_compose_sequentially_within_the_total(dated, tmp_path):
    from topicdp.pipeline.over_time import PeriodSpec, release_over_time

    path, words = dated
    ledger = str(tmp_path / "user.ledger")
    PrivacyLedger.open(ledger, budget=(3.0, 1e-5), unit="user", neighbours="add-remove")
    result = release_over_time(_request(path, words, ledger, "user"), PeriodSpec("month", "2004-05", "2004-07"),
                               echo=lambda line: None)
    eps_p, delta_p, how = result.budget
    assert 1.0 < eps_p < 3.0 and delta_p == pytest.approx(1e-6 / 3) and "sequentially" in how
    reread = PrivacyLedger.open(ledger)
    assert {e.partition for e in reread.records} == {None}
    # the three periods' entries composed exactly (GDP) meet the total, at its delta, from below
    mu = math.sqrt(sum(e.count * (e.sensitivity / e.sigma) ** 2 for e in reread.records))
    from topicdp.rdp import gdp_epsilon

    assert 2.9 < gdp_epsilon(mu, 1e-6) <= 3.0 + 1e-9


def test_a_series_that_does_not_fit_is_refused_before_reading(dated, tmp_path, monkeypatch):
    from topicdp.pipeline import over_time
    from topicdp.pipeline.over_time import PeriodSpec, release_over_time

    path, words = dated
    ledger = str(tmp_path / "doc.ledger")
    PrivacyLedger.open(ledger, budget=(3.0, 1e-5), unit="user", neighbours="add-remove")
    PrivacyLedger.open(ledger).record([GaussianEntry("earlier", 2.0, 1.0, unit="user", neighbours="add-remove")])

    def no_reading(*args, **kwargs):
        raise AssertionError("the corpus was read")

    monkeypatch.setattr(over_time, "split_by_period", no_reading)
    with pytest.raises(BudgetExceededError):
        release_over_time(_request(path, words, ledger, "user"), PeriodSpec("month", "2004-05", "2004-07"),
                          echo=lambda line: None)
    assert len(PrivacyLedger.open(ledger)) == 1


def test_partitions_are_refused_where_they_do_not_compose_in_parallel():
    with pytest.raises(ValueError, match="parallel"):
        GaussianEntry("x", 1.0, 1.0, unit="user", neighbours="add-remove", partition="2004-05")
    with pytest.raises(ValueError, match="parallel"):
        GaussianEntry("x", 1.0, 1.0, unit="document", neighbours="replace-one", partition="2004-05")


def test_match_topics_undoes_a_permutation():
    from types import SimpleNamespace

    from topicdp.pipeline.over_time import match_topics

    rng = np.random.default_rng(0)
    W = rng.dirichlet(np.full(30, 0.1), size=6)
    perm = rng.permutation(6)
    words = [f"w{j}" for j in range(30)]
    shuffled = list(reversed(words))  # another column order: matched over the shared words
    noisy = np.abs(W[perm] + rng.normal(0, 0.005, W.shape))[:, ::-1]
    orders = match_topics([SimpleNamespace(topic_word=W, vocabulary=words),
                           SimpleNamespace(topic_word=noisy, vocabulary=shuffled)])
    np.testing.assert_array_equal(orders[0], np.arange(6))
    np.testing.assert_array_equal(perm[orders[1]], np.arange(6))


def test_a_period_without_documents_is_listed_and_the_page_written(dated, tmp_path):
    from topicdp.pipeline.over_time import PeriodSpec, over_time_html, release_over_time

    path, words = dated
    ledger = str(tmp_path / "doc.ledger")
    PrivacyLedger.open(ledger, budget=(3.0, 1e-5), unit="document", neighbours="add-remove")
    result = release_over_time(_request(path, words, ledger, "document"), PeriodSpec("month", "2004-06", "2004-10"),
                               echo=lambda line: None)
    assert sorted(result.releases) == ["2004-06", "2004-07"]
    assert set(result.refused) == {"2004-08", "2004-09", "2004-10"}  # 2004-09 holds one record of 1 token
    page = tmp_path / "over_time.html"
    over_time_html(result, str(page))
    assert page.read_text().count('class="refused"') == 3 * 10


def test_a_seeded_series_draws_other_noise_in_every_period():
    from topicdp.pipeline.over_time import period_seed

    seeds = [period_seed(5, i) for i in range(4)]
    assert len(set(seeds)) == 4 and period_seed(None, 2) is None and seeds == [period_seed(5, i) for i in range(4)]


def test_privatize_period_on_the_command_line(dated, tmp_path, capsys):
    from topicdp.cli import main

    path, words = dated
    word_file, ledger, out = tmp_path / "words.txt", str(tmp_path / "doc.ledger"), str(tmp_path / "r.json")
    word_file.write_text("\n".join(words))
    assert main(["ledger", "create", ledger, "--epsilon", "3", "--delta", "1e-5", "--unit", "document",
                 "--neighbours", "add-remove"]) == 0
    assert main(["privatize", path, "--vocabulary", str(word_file), "--unit", "document", "--epsilon", "3",
                 "--mechanism", "dp-vem", "--ledger", ledger, "--period", "month", "--periods", "2004-05:2004-06",
                 "--out", out, "--html", str(tmp_path / "t.html"), "--n-jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "each of the 2 periods gets the whole (3, 1e-06)" in printed
    assert "dataset total        (2.528, 1e-05)-DP over the 2 DP run(s)" in printed
    assert (tmp_path / "r.2004-05.json").exists() and (tmp_path / "r.2004-06.json").exists()
    assert (tmp_path / "t.html").exists()
    assert main(["privatize", path, "--vocabulary", str(word_file), "--unit", "document", "--ledger", ledger,
                 "--period", "month"]) == 2  # the range is stated, never read from the data
    assert "--periods START:END" in capsys.readouterr().err


def test_an_empty_period_is_charged_as_a_neighbour_with_one_document_there_is(dated, tmp_path):
    """Whether a period holds any document is private: an empty period draws its DP count before it is refused, so
    that the ledger (whose totals later releases publish) records the same entries as for the neighbouring corpus
    with one document in that period. (It was refused before the count and the ledger recorded nothing for it: in
    a user-level series the totals a later period's release published differed, 2.122 against 2.124.)"""
    from topicdp.pipeline.over_time import PeriodSpec, release_over_time

    path, words = dated
    records = [json.loads(line) for line in open(path)]
    kept = [r for r in records if r["date"][:7] != "2004-06"]  # June empty
    one = kept + [{**kept[0], "date": "2004-06-02"}]  # a neighbour: one document in June
    entries = []
    for name, rows in (("empty", kept), ("one", one)):
        corpus = tmp_path / f"{name}.jsonl"
        corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
        ledger = str(tmp_path / f"{name}.ledger")
        PrivacyLedger.open(ledger, budget=(3.0, 1e-5), unit="document", neighbours="add-remove")
        result = release_over_time(_request(str(corpus), words, ledger, "document"),
                                   PeriodSpec("month", "2004-06", "2004-06"), echo=lambda line: None)
        assert set(result.refused) == {"2004-06"}  # no document, or one: the plan refuses either way
        entries.append([(e.name, e.sigma, e.sensitivity) for e in PrivacyLedger.open(ledger).records])
    assert entries[0] == entries[1] and entries[0]  # the same DP count drawn for both
