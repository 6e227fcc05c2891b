"""Topics released over time: periods stated by the owner, the budget split across them, the ledger's
parallel composition at the document level, topics matched across periods."""

from __future__ import annotations

import json
import math
import re

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
    # three periods of two entries, and the count of the records without a usable date (a part of its own)
    assert len(reread) == 7 and reread.epsilon(1e-5, "exact") == pytest.approx(one.epsilon(1e-5, "exact"))
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


def test_the_count_of_undated_records_draws_a_stream_of_its_own():
    """Its noise is neither a period's stream nor one of the streams a period's run draws from its seed."""
    from topicdp.pipeline.over_time import no_usable_date_seed, period_seed

    ours = tuple(no_usable_date_seed(5).generate_state(4))
    assert no_usable_date_seed(None) is None and ours == tuple(no_usable_date_seed(5).generate_state(4))
    others = [np.random.SeedSequence([5, i]) for i in range(50)]
    others += [np.random.SeedSequence([period_seed(5, i), stream]) for i in range(50) for stream in range(4)]
    assert all(tuple(o.generate_state(4)) != ours for o in others)


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
    assert "dataset total        (2.528, 1e-05)-DP over the 3 DP run(s)" in printed  # 2 periods, 1 count
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


# -- parallel composition only within one partitioning of one dataset ---------------------------------------------

def _pld_epsilon(entries, delta):
    """An independent total: dp-accounting's PLD of the Gaussian entries (sigma over sensitivity, count times)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    total = None
    for e in entries:
        assert isinstance(e, GaussianEntry)
        one = pld.from_gaussian_mechanism(e.sigma / e.sensitivity, value_discretization_interval=1e-4)
        one = one.self_compose(e.count) if e.count > 1 else one
        total = one if total is None else total.compose(one)
    return total.get_epsilon_for_delta(delta)


def _admitted(monkeypatch):
    """Make a series stop where it would start reading: reaching split_by_period means the check admitted it."""
    from topicdp.pipeline import over_time

    class Admitted(Exception):
        pass

    def reading(*args, **kwargs):
        raise Admitted

    monkeypatch.setattr(over_time, "split_by_period", reading)
    return Admitted


def test_a_quarterly_series_after_a_monthly_one_composes_sequentially_with_it(dated, tmp_path, monkeypatch):
    """A May document is in the monthly series' 2004-05 and the quarterly series' 2004Q2: the two series compose
    sequentially (a quarterly series of the whole budget is refused before reading), and the ledger's total is
    what dp-accounting's PLD accountant gives for every entry a May document is in. (Keyed by the bare label, both
    series of (3, 1e-6) were admitted: 'ledger show' said 0.47 left while a May document was released by both.)"""
    from topicdp.pipeline.over_time import PeriodSpec, release_over_time

    path, words = dated
    ledger = str(tmp_path / "doc.ledger")
    PrivacyLedger.open(ledger, budget=(3.0, 1e-5), unit="document", neighbours="add-remove")
    release_over_time(_request(path, words, ledger, "document"), PeriodSpec("month", "2004-05", "2004-07"),
                      echo=lambda line: None)
    quarters = PeriodSpec("quarter", "2004Q2", "2004Q3")
    with monkeypatch.context() as m:
        _admitted(m)
        with pytest.raises(BudgetExceededError) as refused:
            release_over_time(_request(path, words, ledger, "document"), quarters, echo=lambda line: None)
    assert refused.value.total > 3.0 and len(PrivacyLedger.open(ledger)) == 7  # nothing of it recorded
    from dataclasses import replace

    result = release_over_time(replace(_request(path, words, ledger, "document"), epsilon=1.6), quarters,
                               echo=lambda line: None)
    assert "2004Q2" in result.releases  # (2004Q3, half its size, is refused by its forecast after its DP count)
    reread = PrivacyLedger.open(ledger)
    may = [e for e in reread.records if e.partition in ("2004-05", "2004Q2")]
    assert len(may) == 4  # a month's unit count and dp-vem, the quarter's
    ours = reread.epsilon(1e-5, "best")
    assert ours == pytest.approx(_pld_epsilon(may, 1e-5), rel=1e-6)  # measured 3e-8 (PLD interval 1e-4)
    assert ours > 2.6  # the monthly series alone spent 2.528
    summary = reread.file.summary(PrivacyLedger)
    assert summary["dp"]["spent"] == pytest.approx(ours) and summary["dp"]["remaining"] == pytest.approx(3.0 - ours)
    assert summary["dp"]["basic"] == {"epsilon": 4.6, "delta": 2e-6}  # one month's and one quarter's guarantees
    from topicdp.rdp.ledger_cli import format_summary

    shown = format_summary(summary)
    assert "part 2004-05 of partitioning 1 (months by 'date'" in shown and "part 2004Q2 of partitioning 2" in shown
    assert "sha256" not in shown  # the corpus digest stays in the owner's file


@pytest.fixture(scope="module")
def two_dates(dated, tmp_path_factory):
    """The dated corpus with a second date field ("sent", a month later), and a monthly series of May and June by
    "date" charged to a document-level ledger (its file and the ledger's)."""
    from topicdp.pipeline.over_time import PeriodSpec, release_over_time

    path, words = dated
    directory = tmp_path_factory.mktemp("two_dates")
    rows = [json.loads(line) for line in open(path)]
    corpus = directory / "two_dates.jsonl"
    corpus.write_text("".join(json.dumps({**r, "sent": f"2004-{int(r['date'][5:7]) % 12 + 1:02d}-02"}) + "\n"
                              for r in rows))
    ledger = str(directory / "doc.ledger")
    PrivacyLedger.open(ledger, budget=(3.0, 1e-5), unit="document", neighbours="add-remove")
    release_over_time(_request(str(corpus), words, ledger, "document"), PeriodSpec("month", "2004-05", "2004-06"),
                      echo=lambda line: None)
    return str(corpus), words, ledger


def test_another_period_of_the_same_partitioning_composes_in_parallel(two_dates, monkeypatch):
    """July by the same date field of the same file is a new part of the same partitioning: the whole budget again
    (as before: parallel across labels). The May-June series left July's documents, dated outside its periods,
    uncounted: a count of them charged as a part of this partitioning would compose in parallel with July's release
    of the same documents (an under-count)."""
    from topicdp.pipeline.over_time import PeriodSpec, release_over_time

    corpus, words, ledger = two_dates
    admitted = _admitted(monkeypatch)
    with pytest.raises(admitted):
        release_over_time(_request(corpus, words, ledger, "document"), PeriodSpec("month", "2004-07", "2004-07"),
                          echo=lambda line: None)


def test_the_same_series_twice_composes_sequentially_within_each_period(two_dates, monkeypatch):
    """The same months of the same file by the same field are the same parts: a second run of the whole budget is
    refused (sequential within a part), a small one admitted (as before)."""
    from dataclasses import replace

    from topicdp.pipeline.over_time import PeriodSpec, release_over_time

    corpus, words, ledger = two_dates
    admitted = _admitted(monkeypatch)
    spec = PeriodSpec("month", "2004-05", "2004-06")
    with pytest.raises(BudgetExceededError):
        release_over_time(_request(corpus, words, ledger, "document"), spec, echo=lambda line: None)
    with pytest.raises(admitted):
        release_over_time(replace(_request(corpus, words, ledger, "document"), epsilon=0.3), spec,
                          echo=lambda line: None)


def test_a_series_by_another_date_field_composes_sequentially(two_dates, monkeypatch):
    """July by "sent" holds June's documents by "date": another partitioning, sequential (the bare label July was
    taken for a new part and the series admitted)."""
    from topicdp.pipeline.over_time import PeriodSpec, release_over_time

    corpus, words, ledger = two_dates
    _admitted(monkeypatch)
    with pytest.raises(BudgetExceededError):
        release_over_time(_request(corpus, words, ledger, "document"),
                          PeriodSpec("month", "2004-07", "2004-07", date_field="sent"), echo=lambda line: None)
    assert len(PrivacyLedger.open(ledger)) == 5  # two periods' entries and the count of undated records


def test_a_series_of_another_corpus_file_composes_sequentially(two_dates, tmp_path, monkeypatch):
    """Another file (here the same records and one more) is another dataset as far as the ledger can tell: its July
    composes sequentially with the first file's May and June."""
    from topicdp.pipeline.over_time import PeriodSpec, release_over_time

    corpus, words, ledger = two_dates
    other = tmp_path / "other.jsonl"
    other.write_text(open(corpus).read() + json.dumps({"user": 1, "date": "2004-07-03", "text": "one more"}) + "\n")
    _admitted(monkeypatch)
    with pytest.raises(BudgetExceededError):
        release_over_time(_request(str(other), words, ledger, "document"), PeriodSpec("month", "2004-07", "2004-07"),
                          echo=lambda line: None)


def _g(name, sigma, partition=None, partitioning=None):
    labels = {} if partition is None else {"partition": partition}
    if partitioning is not None:
        labels["partitioning"] = partitioning
    return GaussianEntry(name, sigma, 1.0, unit="document", neighbours="add-remove", **labels)


def test_one_rule_composes_parts_partitionings_and_legacy_labels():
    """Within a partitioning: sequential within a part (the same series twice), parallel across parts; across
    partitionings: the worst combination of one part each; a legacy bare label (no partitioning): its own
    partitioning, sequential with every other label."""
    from topicdp.rdp.ledger import partitioning_key

    months = partitioning_key("sha256:aa", "month", "date")
    quarters = partitioning_key("sha256:aa", "quarter", "date")
    by_sent = partitioning_key("sha256:aa", "month", "sent")

    def total(entries):
        ledger = PrivacyLedger()
        ledger.record(entries)
        return ledger.epsilon(1e-5, "exact")

    def sequential(*sigmas):
        return total([_g(f"s{i}", s) for i, s in enumerate(sigmas)])

    twice = [_g("a", 4.0, "2004-05", months), _g("b", 5.0, "2004-06", months), _g("c", 4.0, "2004-05", months),
             _g("d", 3.0, "2004-06", months)]
    assert total(twice) == pytest.approx(max(sequential(4.0, 4.0), sequential(5.0, 3.0)))
    both = [_g("m5", 4.0, "2004-05", months), _g("m6", 3.0, "2004-06", months), _g("q2", 6.0, "2004Q2", quarters),
            _g("q3", 2.0, "2004Q3", quarters), _g("all", 9.0)]
    assert total(both) == pytest.approx(sequential(3.0, 2.0, 9.0))
    assert total([_g("m5", 4.0, "2004-05", months), _g("s6", 4.0, "2004-06", by_sent)]) == pytest.approx(
        sequential(4.0, 4.0))
    legacy = [_g("a", 4.0, "2004-05"), _g("b", 4.0, "2004-06"), _g("c", 4.0, "2004-07", months)]
    assert total(legacy) == pytest.approx(sequential(4.0, 4.0, 4.0))
    with pytest.raises(ValueError, match="partitioning"):
        GaussianEntry("x", 1.0, 1.0, unit="document", neighbours="add-remove", partitioning=months)


def test_a_legacy_ledger_file_is_read_and_its_bare_labels_compose_sequentially(tmp_path):
    """A ledger written when a partition was a bare period label still opens; its labels are each their own
    partitioning of an unknown corpus (an old monthly series is over-counted, never under-counted)."""
    from topicdp.rdp.ledger_file import LedgerFile

    path = str(tmp_path / "old.ledger")
    PrivacyLedger.open(path, budget=(5.0, 1e-5), unit="document", neighbours="add-remove")
    store = LedgerFile(path)
    for label in ("2004-05", "2004-06"):  # what a series wrote before partitionings were named
        with store.locked():
            state = store.state()
            rec = {"type": "planned", "run": label, "date": "2026-01-01T00:00:00+00:00", "partition": label,
                   "guarantee": {"epsilon": 1.5, "delta": 1e-6},
                   "entries": [{"kind": "gaussian", "name": "dp-vem", "sigma": 2.0, "sensitivity": 1.0, "count": 1,
                                "unit": "document", "neighbours": "add-remove", "partition": label}]}
            store._append(state, [rec])
    reread = PrivacyLedger.open(path)
    assert reread.epsilon(1e-5, "exact") == pytest.approx(
        PrivacyLedger(_entries=[GaussianEntry("x", 2.0, 1.0, count=2)]).epsilon(1e-5, "exact"))
    assert store.summary(PrivacyLedger)["dp"]["basic"] == {"epsilon": 3.0, "delta": 2e-6}
    assert [getattr(e, "partitioning", None) for e in reread.records] == [None, None]


def test_many_combinations_are_bounded_by_each_partitionings_worst_part():
    """Past MAX_COMBINATIONS the total is bounded term by term: never below the exact maximum over every
    combination, equal to it for exact GDP composition (whose mu^2 add up)."""
    from topicdp.rdp.ledger import (ApproxEntry, _epsilon_bound, _signature, partition_of, partitioning_key,
                                    worst_combination)

    rng = np.random.default_rng(3)
    keys = [partitioning_key(f"sha256:{i}", "month", "date") for i in range(3)]
    entries = [_g(f"{i}-{j}", float(rng.uniform(2, 8)), f"p{j}", keys[i]) for i in range(3) for j in range(12)]
    entries += [ApproxEntry("a", 0.1, 1e-7, unit="document", neighbours="add-remove", partition="p0",
                            partitioning=keys[0]), _g("common", 5.0)]
    gaussians = [e for e in entries if isinstance(e, GaussianEntry)]
    for method, items in (("exact", gaussians), ("rdp", entries), ("simple", entries), ("best", entries)):
        def compose(es, method=method):
            return _epsilon_bound(es, [], 1e-5, method)

        def bound(common, groups, method=method):
            return _epsilon_bound(common, groups, 1e-5, method)

        exact = worst_combination(items, partition_of, compose, signature=_signature, bound=bound, limit=10**6)
        bounded = worst_combination(items, partition_of, compose, signature=_signature, bound=bound)
        assert bounded >= exact * (1 - 1e-9)
        if method == "exact":
            assert bounded == pytest.approx(exact)
        else:
            assert bounded <= exact * 1.1


# -- records without a usable date ---------------------------------------------------------------------------

def _left_out_lines(lines):
    """The lines a series prints about the records in no period."""
    return [line for line in lines if "usable" in line or "outside the stated periods" in line]


def _without_dp_number(line):
    return re.sub(r"about -?\d+ ", "about N ", line)


def _digits(line):
    """The numbers a line states, but the standard's name."""
    return re.findall(r"\d+", line.replace("ISO 8601", ""))


def test_records_without_a_usable_date_are_counted_and_the_series_goes_on(tmp_path, monkeypatch):
    """A missing date and one that does not parse are alike: in no period, counted for the owner's diagnostics, the
    series not stopped; the printed lines are the same whatever their number (a count of private records), but for
    the DP count of the document level. Only the calendar form YYYY-MM-DD is read: the ISO week date Python 3.11
    also parses would make whether a document has a usable date depend on the Python reading it."""
    from topicdp.datasets import themed_vocabulary
    from topicdp.pipeline import run
    from topicdp.pipeline.over_time import PeriodSpec, release_over_time, split_by_period

    good = [{"user": i, "date": f"2004-05-{1 + i % 9:02d}", "text": "a b"} for i in range(4)]
    bad = [{"user": 9, "text": "no date"}, {"user": 9, "date": "yesterday", "text": "x"},
           {"user": 9, "date": "2004-13-01", "text": "x"}, {"user": 9, "date": 3.5, "text": "x"},
           {"user": 9, "date": None, "text": "x"}, {"user": 9, "date": "2004-W19-1", "text": "x"},
           {"user": 9, "date": "2005-01-01", "text": "outside"}]
    spec = PeriodSpec("month", "2004-05", "2004-06")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in good[:2] + bad + good[2:]))
    (tmp_path / "split").mkdir()
    files = split_by_period(str(corpus), spec, str(tmp_path / "split"))
    assert (files.no_usable_date, files.outside) == (6, 1)
    assert len(open(files["2004-05"]).readlines()) == 4 and open(files["2004-06"]).read() == ""

    def stub(plan, prepared, **_):
        raise ValueError("not released in this test")

    monkeypatch.setattr(run, "release_prepared", stub)
    said = {}
    for name, rows in (("bad", good + bad), ("clean", good)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        ledger = str(tmp_path / f"{name}.ledger")
        PrivacyLedger.open(ledger, budget=(3.0, 1e-5), unit="document", neighbours="add-remove")
        lines = []
        result = release_over_time(_request(str(path), themed_vocabulary(), ledger, "document"), spec,
                                   echo=lines.append)
        assert set(result.refused) == {"2004-05", "2004-06"}  # every period went on to its release (stubbed)
        said[name] = [_without_dp_number(line) for line in _left_out_lines(lines)]
        if name == "bad":
            assert result.diagnostics == {"no usable date": 6, "outside the periods": 1}
    assert said["bad"] == said["clean"] and len(said["bad"]) == 2
    undated, outside = said["bad"]
    assert "about N (a DP count, noise sigma" in undated
    assert "left out of every period" in outside and not _digits(outside)


@pytest.fixture(scope="module")
def undated(dated, tmp_path_factory):
    """Two neighbouring corpora: the dated corpus with 40 records without a usable date, and with 41."""
    path, words = dated
    rows = [json.loads(line) for line in open(path)]
    extra = [{"user": 7000 + i, "text": "undated words"} if i % 2 else
             {"user": 7000 + i, "date": "not a date", "text": "undated words"} for i in range(41)]
    out = {}
    for n in (40, 41):
        directory = tmp_path_factory.mktemp(f"undated{n}")  # the same names in each (lines print the ledger path)
        (directory / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:100] + extra[:n] + rows[100:]))
        out[n] = directory
    return out, words


def test_undated_records_get_a_dp_count_that_adds_nothing_to_a_document_level_series(undated):
    """At the document level with add/remove neighbours, the records without a usable date are a part of the
    series' partitioning: their Gaussian count, at a period's count sigma, is printed, charged to the ledger as that
    part before its noise, and changes none of the ledger's totals (every period's part dominates it). Neighbouring
    corpora (one more undated record), seeded alike, print the same lines but for the DP number. (The count was not
    released: the line said they were left out, without a number.)"""
    from topicdp.pipeline.over_time import NO_USABLE_DATE, PeriodSpec, release_over_time

    directories, words = undated
    spec = PeriodSpec("month", "2004-05", "2004-06")
    printed, results, ledgers = {}, {}, {}
    for n, directory in directories.items():
        ledger = str(directory / "doc.ledger")
        PrivacyLedger.open(ledger, budget=(3.0, 1e-5), unit="document", neighbours="add-remove")
        lines = []
        results[n] = release_over_time(_request(str(directory / "c.jsonl"), words, ledger, "document"), spec,
                                       echo=lines.append)
        printed[n] = [line.replace(str(directory), "<dir>") for line in lines]
        ledgers[n] = PrivacyLedger.open(ledger)
    assert [_without_dp_number(line) for line in printed[40]] == [_without_dp_number(line) for line in printed[41]]
    result, ledger = results[40], ledgers[40]
    assert sorted(result.releases) == ["2004-05", "2004-06"] and result.diagnostics["no usable date"] == 40
    count, outside = result.left_out
    assert (count.records, count.status, outside.status) == (NO_USABLE_DATE, "DP", "not counted")
    line = next(line for line in printed[40] if "about" in line)
    value, sigma = re.search(r"about (\d+) \(a DP count, noise sigma ([0-9.e+-]+);", line).groups()
    assert int(value) == count.value and float(sigma) == pytest.approx(count.sigma, rel=1e-2)
    assert abs(count.value - 40) <= 5 * count.sigma  # (sigma 29: the count budget is (0.15, 5e-8))
    assert abs(results[41].left_out[0].value - count.value) <= 1  # seeded alike: the same noise, one more record
    # charged as a part of the series' partitioning, at a period's own count sigma
    ours = [e for e in ledger.records if e.partition == NO_USABLE_DATE]
    period_counts = [e for e in ledger.records if e.name == "unit count"]
    assert len(ours) == 1 and len(period_counts) == 2
    assert ours[0].partitioning == period_counts[0].partitioning is not None
    assert (ours[0].sigma, ours[0].sensitivity, ours[0].count) == (period_counts[0].sigma, 1.0, 1)
    assert ours[0].sigma == count.sigma
    # parallel composition: the ledger's totals are those without the part
    without = PrivacyLedger(_entries=[e for e in ledger.records if e.partition != NO_USABLE_DATE])
    for method in ("exact", "rdp", "simple", "best"):
        assert ledger.epsilon(1e-5, method) == pytest.approx(without.epsilon(1e-5, method), rel=1e-9)
    summary = ledger.file.summary(PrivacyLedger)
    assert summary["dp"]["basic"] == {"epsilon": 3.0, "delta": 1e-6}  # a period's guarantee, not more
    assert summary["dp"]["spent"] == pytest.approx(without.epsilon(1e-5, "best"), rel=1e-9)
    assert [r["status"] for r in summary["runs"]] == ["released"] * 3
    assert not _digits(_left_out_lines(printed[40])[1])  # the records outside the periods: no number


def test_a_user_level_series_gives_no_count_of_undated_records_and_says_why(tmp_path, monkeypatch):
    """The periods compose sequentially at the user level: a count would spend budget the split did not provide, so
    none is drawn nor charged, and the line, the same whatever the data hold, says why. (It said the number was not
    printed, not why.)"""
    from topicdp.datasets import themed_vocabulary
    from topicdp.pipeline import run
    from topicdp.pipeline.over_time import PeriodSpec, release_over_time

    def stub(plan, prepared, **_):
        raise ValueError("not released in this test")

    monkeypatch.setattr(run, "release_prepared", stub)
    good = [{"user": i, "date": f"2004-05-{1 + i % 9:02d}", "text": "a b"} for i in range(4)]
    said = {}
    for n in (0, 1, 30):
        path = tmp_path / f"c{n}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in good + [{"user": 9, "text": "no date"}] * n))
        ledger = str(tmp_path / f"u{n}.ledger")
        PrivacyLedger.open(ledger, budget=(3.0, 1e-5), unit="user", neighbours="add-remove")
        lines = []
        result = release_over_time(_request(str(path), themed_vocabulary(), ledger, "user"),
                                   PeriodSpec("month", "2004-05", "2004-06"), echo=lines.append)
        said[n] = _left_out_lines(lines)
        assert [item.status for item in result.left_out] == ["not counted"]
        assert len(PrivacyLedger.open(ledger)) == 0  # nothing charged (the periods' releases are stubbed)
    assert said[0] == said[1] == said[30] and len(said[0]) == 1
    line = said[0][0]
    assert "about" not in line and not _digits(line)
    assert "compose sequentially" in line and "would spend budget" in line and "owner's diagnostics" in line


def test_dates_read_under_a_stated_format_in_english_whatever_the_locale():
    from topicdp.pipeline.over_time import PeriodSpec, period_of

    assert period_of("14,May,2004", "month", "%d,%B,%Y") == "2004-05"
    assert period_of("3/sep/01", "quarter", "%d/%b/%y") == "2001Q3"
    for bad in ("14,Mai,2004", "30,February,2004", "14,May,2004 ", "2004-05-14", 3.5):  # not a date in the format
        with pytest.raises(ValueError):
            period_of(bad, "month", "%d,%B,%Y")
    with pytest.raises(ValueError, match="date_format.*%Q is not read"):
        PeriodSpec("month", "2004-05", "2004-06", date_format="%d,%Q,%Y")
    with pytest.raises(ValueError, match="date_format.*must state the year"):
        PeriodSpec("month", "2004-05", "2004-06", date_format="%d,%B")


def test_another_date_format_is_another_partitioning():
    from topicdp.rdp.partitions import partitioning_key

    iso = partitioning_key("sha256:aa", "month", "date")
    assert iso == '{"corpus":"sha256:aa","date_field":"date","period":"month"}'  # ISO: the key as before
    day_first, month_first = (partitioning_key("sha256:aa", "month", "date", f) for f in ("%d/%m/%Y", "%m/%d/%Y"))
    assert len({iso, day_first, month_first}) == 3


def test_a_series_dated_in_another_format_releases_the_periods_of_the_iso_dated_file(dated, tmp_path, capsys):
    import dataclasses

    from topicdp.cli import main
    from topicdp.pipeline.over_time import PeriodSpec, split_by_period

    path, words = dated
    months = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December")
    rows = [json.loads(line) for line in open(path)]
    for r in rows:
        year, month, day = r["date"].split("-")
        r["date"] = f"{int(day)},{months[int(month) - 1]},{year}"
    rows.append({"user": 1, "date": "2004-05-14", "text": "an ISO date is not in the stated format"})
    named = tmp_path / "named.jsonl"
    named.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = PeriodSpec("month", "2004-05", "2004-06")
    for corpus, fmt in ((path, None), (str(named), "%d,%B,%Y")):
        split = tmp_path / f"split-{fmt is None}"
        split.mkdir()
        files = split_by_period(corpus, dataclasses.replace(spec, date_format=fmt), str(split))
        counts = [len(open(files[p]).readlines()) for p in spec.labels]  # July and one September record outside
        assert counts == [1200, 1200] and files.outside == 1201 and files.no_usable_date == (fmt is not None)
    word_file = tmp_path / "words.txt"
    word_file.write_text("\n".join(words))
    released = {}
    for corpus, extra in ((path, []), (str(named), ["--date-format", "%d,%B,%Y"])):
        ledger, out = str(tmp_path / f"{len(extra)}.ledger"), str(tmp_path / f"r{len(extra)}.json")
        assert main(["ledger", "create", ledger, "--epsilon", "3", "--delta", "1e-5", "--unit", "document",
                     "--neighbours", "add-remove"]) == 0
        assert main(["privatize", corpus, "--vocabulary", str(word_file), "--unit", "document", "--epsilon", "3",
                     "--mechanism", "dp-vem", "--ledger", ledger, "--period", "month", "--periods", "2004-05:2004-06",
                     "--out", out, "--n-jobs", "1", "--seed", "3", *extra]) == 0
        printed = capsys.readouterr().out
        released[len(extra)] = sorted(p for p in spec.labels if (tmp_path / f"r{len(extra)}.{p}.json").exists())
        assert "refused" not in printed
    assert released[0] == released[2] == ["2004-05", "2004-06"]
    for p in released[0]:  # the same documents in each period, seeded alike: the same release
        same = [json.loads((tmp_path / f"r{n}.{p}.json").read_text())["topic_word"] for n in (0, 2)]
        assert same[0] == same[1]
    assert "not a date in the format '%d,%B,%Y'" in printed  # the line about records without a usable date
    with pytest.raises(SystemExit) as refused:  # refused as the flags are parsed, before anything is read
        main(["privatize", str(named), "--vocabulary", str(word_file), "--ledger", ledger, "--period", "month",
              "--periods", "2004-05:2004-06", "--date-format", "%d,%Q,%Y"])
    assert refused.value.code == 2
    assert "argument --date-format: '%d,%Q,%Y': %Q is not read" in capsys.readouterr().err


def test_date_format_without_a_period_is_refused(dated, tmp_path, capsys):
    """--date-format and --periods shape only a release over time: without --period they are refused before
    anything is read, not ignored."""
    from topicdp.cli import main

    path, words = dated
    word_file = tmp_path / "words.txt"
    word_file.write_text("\n".join(words) + "\n")
    for extra in (["--date-format", "%d,%B,%Y"], ["--periods", "2004-05:2004-06"]):
        code = main(["privatize", path, "--vocabulary", str(word_file), "--unit", "document", "--epsilon", "3",
                     "--out", str(tmp_path / "r.json"), *extra])
        err = capsys.readouterr().err
        assert code == 2 and extra[0] in err and "--period" in err
    assert not (tmp_path / "r.json").exists()


def _series_json(page):
    (block,) = re.findall(r'<script type="application/json" id="topicdp-view-data">(.*?)</script>', page, re.S)
    return json.loads(block)


@pytest.fixture(scope="module")
def series_page(dated, tmp_path_factory):
    """A document-level series of three months, the last one empty (refused), and its page."""
    from topicdp.pipeline.over_time import PeriodSpec, over_time_html, release_over_time

    path, words = dated
    directory = tmp_path_factory.mktemp("series_page")
    ledger = str(directory / "doc.ledger")
    PrivacyLedger.open(ledger, budget=(3.0, 1e-5), unit="document", neighbours="add-remove")
    result = release_over_time(_request(path, words, ledger, "document"), PeriodSpec("month", "2004-06", "2004-08"),
                               echo=lambda line: None)
    result.diagnostics = {"no usable date": 918273, "outside the periods": 918274}  # the owner's: never shown
    for r in result.releases.values():
        r.diagnostics["planted"] = "ZQX-PLANTED-PERIOD"
    page = directory / "series.html"
    assert over_time_html(result, str(page)) == page.read_text(encoding="utf-8")
    return result, page


def test_the_series_page_is_the_view_of_each_period_with_a_selector_and_the_series_headline(series_page):
    result, page = series_page
    text = page.read_text(encoding="utf-8")
    assert sorted(result.releases) == ["2004-06", "2004-07"] and list(result.refused) == ["2004-08"]
    data = _series_json(text)
    assert data["series"] is True and data["periods"] == ["2004-06", "2004-07"]
    for p in data["periods"]:  # each period's view, its topics in the matched order
        view = data["views"][p]
        assert view["format"] == "topicdp.view/1" and view["n_topics"] == 10
        matched = result.matched(p)
        for k, topic in enumerate(view["topics"]):
            assert topic["p"] == sorted(matched[k].tolist(), reverse=True)[:len(topic["p"])]
    select = re.search(r'<select id="period">(.*?)</select>', text).group(1)  # a period each, the refused disabled
    options = re.findall(r'<option value="([^"]+)"( disabled)?>([^<]*)</option>', select)
    assert [(value, bool(off)) for value, off, _ in options] == [("2004-06", False), ("2004-07", False),
                                                                  ("2004-08", True)]
    assert [label.startswith(value) for value, _, label in options] == [True] * 3 and "refused" in options[2][2]
    headline = re.search(r'<div class="line" id="headline">([^<]*)</div>', text).group(1)
    assert headline.startswith("series guarantee") and all(
        fact in headline for fact in ("(3, 1e-06)-DP", "document", "add-remove", "3 period"))
    assert text.index('id="headline"') < text.index('data-period-privacy="2004-06"')  # before a period's own
    compose = re.search(r"how the periods compose: ([^<]*)", text).group(1)
    assert all(fact in compose for fact in ("3 periods", "(3, 1e-06)", "disjoint", "parallel"))
    assert text.count('id="headline"') == 1 and 'id="forced"' not in text
    import html as _html

    assert f"<b>2004-08</b>: {_html.escape(result.refused['2004-08'])}</li>" in text  # the refusal and its reason
    assert 'id="map"' in text and 'id="bars"' in text and 'id="lambda"' in text  # the single release's page


def test_the_series_page_is_offline_and_shows_no_exact_private_count(series_page):
    result, page = series_page
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"https?://", text) and " src=" not in text and "<link" not in text
    assert "918273" not in text and "918274" not in text and "ZQX-PLANTED-PERIOD" not in text
    for exact in (1200, 3600, 3601):  # the documents of a period, of the periods, of the file
        assert not re.search(rf"(?<![0-9.]){exact}(?![0-9])", text)


@pytest.mark.skipif(not __import__("shutil").which("chromium"), reason="no chromium binary to run the page")
def test_the_series_page_shows_the_period_asked_for_in_a_browser(series_page, tmp_path):
    import shutil
    import subprocess

    result, page = series_page
    dom = subprocess.run([shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update",
                          f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri() + "#2004-07"],
                         capture_output=True, text=True, timeout=120).stdout
    body = re.search(r"<body([^>]*)>", dom).group(1)
    assert 'data-ready="1"' in body and 'data-period="2004-07"' in body and "data-error" not in body
    assert re.search(r'data-period-privacy="2004-06" hidden', dom) and 'data-period-privacy="2004-07">' in dom
    assert len(re.findall(r'<circle[^>]*class="topic', dom)) == 10
    shown = re.findall(r'class="bar-row" data-topic="0" data-word="([^"]*)"', dom)
    view = _series_json(page.read_text(encoding="utf-8"))["views"]["2004-07"]
    assert shown == view["topics"][0]["words"]  # lambda 1: topic 0's words of July, as matched


def test_the_series_page_sizes_topics_by_released_parameters_in_the_matched_order(tmp_path):
    """A road that publishes topic sizes (extra.alpha) shows them per period, each period's reordered with its
    topics; the page is built from the published releases alone (no pipeline run needed)."""
    from reports import make_report

    from topicdp.pipeline.over_time import OverTimeResult, over_time_html
    from topicdp.private_release import PrivateRelease

    W = np.eye(3) * 0.7 + 0.1
    report = make_report(mechanism="test-mechanism", guarantee="approx-DP", unit="document", neighbours="add-remove",
                         epsilon=3.0, delta=1e-6, seeded=False,
                         published={"topic_word": "DP", "vocabulary": "public: a public word list",
                                    "extra.alpha": "post-processing: of DP outputs"})
    alpha = np.array([1.0, 2.0, 5.0])
    perm = np.array([2, 0, 1])
    releases = {"2004-05": PrivateRelease(topic_word=W, noisy=None, vocabulary=("a", "b", "c"), report=report,
                                          extra={"alpha": alpha}),
                "2004-06": PrivateRelease(topic_word=W[perm], noisy=None, vocabulary=("a", "b", "c"), report=report,
                                          extra={"alpha": alpha[perm]})}
    result = OverTimeResult(["2004-05", "2004-06"], releases=releases,
                            order={"2004-05": np.arange(3), "2004-06": np.argsort(perm)},
                            budget=(3.0, 1e-6, "each of the 2 periods gets the whole (3, 1e-06)"), total=(3.0, 1e-6),
                            unit="document", neighbours="add-remove")
    page = over_time_html(result, str(tmp_path / "s.html"))
    views = _series_json(page)["views"]
    for p in ("2004-05", "2004-06"):  # matched: topic k is the same topic, with the same size, in both periods
        assert [t["words"][0] for t in views[p]["topics"]] == ["a", "b", "c"]
        assert np.allclose([t["size"] for t in views[p]["topics"]], alpha / alpha.sum())
        assert views[p]["sizes_released"] is True
    assert 'id="topic-size"' in page and "Circle area: topic size" in page
