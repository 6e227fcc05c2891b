"""Every way a release can stop says exactly what it spent, and what can be checked before spending is.

The ledger of the release is the truth: each test captures it and compares the refusal's statement with the
entries it holds. The stops covered: the forecast (after the DP count), too few DP words and the re-plan
(after the count and the vocabulary), a spectral precondition (after part of the topics' releases), the
simulation on a public reference, an error inside a mechanism, and a shard gone at each step.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import topicdp.pipeline.run as run_module
from faults import failing_row
from topicdp.pipeline import (CorpusSource, ReleaseRefused, ReleaseRequest, VocabularyPolicy, release,
                              split_budget)

WORDS = [f"w{a}{b}" for a in "abcdef" for b in "abcdefghij"]  # three blocks of twenty words


def _lines(n_users: int, seed: int = 0, docs: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for u in range(n_users):
        for _ in range(docs):
            block = rng.integers(3)
            out.append(json.dumps({"user": f"u{u}", "text": " ".join(rng.choice(WORDS[20 * block:20 * block + 20],
                                                                                  size=30))}))
    return out


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("refusals") / "corpus.jsonl"
    path.write_text("\n".join(_lines(400)) + "\n")
    return str(path)


@pytest.fixture
def ledgers(monkeypatch):
    """The ledger of each release, as the pipeline made it."""
    made = []

    class Captured(run_module.PrivacyLedger):
        def __post_init__(self) -> None:
            super().__post_init__()
            made.append(self)

    monkeypatch.setattr(run_module, "PrivacyLedger", Captured)
    return made


def _expected(request: ReleaseRequest, ledger) -> tuple[tuple[str, ...], bool]:
    """What the refusal must name: each step the ledger holds an entry of, with its budget from the plan."""
    names = [e.name for e in ledger.records]
    budget = split_budget(request)
    steps = []
    if "unit count" in names:
        steps.append(f"the unit count ({budget.count})")
    if any(n.startswith("vocabulary") for n in names):
        steps.append(f"the vocabulary ({budget.vocabulary})")
    return tuple(steps), any(n != "unit count" and not n.startswith("vocabulary") for n in names)


def _refused(request, ledgers) -> ReleaseRefused:
    with pytest.raises(ReleaseRefused) as caught:
        release(request, echo=lambda line: None)
    refusal = caught.value
    assert len(ledgers) == 1
    assert (refusal.spent, refusal.topics_spent) == _expected(request, ledgers[0]), str(refusal)
    text = str(refusal)
    for step in refusal.spent:
        assert step in text
    if not ledgers[0].records:
        assert text.endswith("no budget was spent")
    elif refusal.topics_spent:
        assert "part of the topics' budget" in text and " and  and " not in text
    else:
        assert "the topics' budget was not spent" in text
    return refusal


def _request(path, **kwargs):
    options = dict(vocabulary=VocabularyPolicy.dp(max_features=100), epsilon=30.0, delta=1e-3, n_topics=3, seed=0)
    options.update(kwargs)
    return ReleaseRequest(CorpusSource(path), **options)


def test_the_forecast_refusal_names_the_count(corpus_file, ledgers):
    refusal = _refused(_request(corpus_file, epsilon=0.05, vocabulary=VocabularyPolicy.public(WORDS)), ledgers)
    assert refusal.spent and refusal.spent[0].startswith("the unit count (epsilon=")


def test_too_few_dp_words_names_the_count_and_the_vocabulary(corpus_file, ledgers, monkeypatch):
    monkeypatch.setattr("topicdp.vocabulary._select", lambda totals, sigma, tau, max_features, rng: tuple(WORDS[:2]))
    refusal = _refused(_request(corpus_file), ledgers)
    assert len(refusal.spent) == 2 and "fewer than the 3 topics" in str(refusal)


def test_a_spectral_precondition_names_the_topics_part(corpus_file, ledgers, monkeypatch):
    from topicdp.spectral import PreconditionError

    def fails(ledger, n_units):
        ledger.add_gaussian("M2", 1.0, 0.01, unit="user", neighbours="replace-one")
        raise PreconditionError("precondition failed on a released quantity")

    monkeypatch.setitem(run_module.MECHANISMS, "spectral-config-2",
                        failing_row(run_module.MECHANISMS["spectral-config-2"], fails))
    refusal = _refused(_request(corpus_file, mechanism="spectral-config-2", n_units=400, release_anyway=True),
                       ledgers)
    assert refusal.topics_spent and refusal.spent == (f"the vocabulary ({split_budget(_request(corpus_file, n_units=400)).vocabulary})",)


def test_an_error_inside_a_mechanism_names_what_was_spent(corpus_file, ledgers, monkeypatch):
    def broken(ledger, n_units):
        raise RuntimeError("the solver failed")

    row = run_module.MECHANISMS["dp-vem"]
    monkeypatch.setitem(run_module.MECHANISMS, "dp-vem", failing_row(row, broken))
    refusal = _refused(_request(corpus_file, mechanism="dp-vem", release_anyway=True), ledgers)
    assert "RuntimeError: the solver failed" in str(refusal) and len(refusal.spent) == 2
    assert isinstance(refusal.__cause__, RuntimeError)  # the traceback is kept for the owner


def test_the_simulation_on_the_reference_names_the_count_and_the_vocabulary(corpus_file, ledgers, monkeypatch,
                                                                           tmp_path):
    reference = tmp_path / "reference.jsonl"
    reference.write_text("\n".join(_lines(60, seed=5)) + "\n")

    class Noise:  # what forecast_on_reference returns, as far as the pipeline reads it
        verdict = "noise"

        @staticmethod
        def lines():
            return ["simulated: noise"]

    monkeypatch.setattr("topicdp.forecast.forecast_on_reference", lambda *a, **k: Noise())
    refusal = _refused(_request(corpus_file, mechanism="dp-vem", reference=str(reference),
                                vocabulary=VocabularyPolicy.public(WORDS)), ledgers)
    assert "simulation on the public reference" in str(refusal) and len(refusal.spent) == 1


@pytest.mark.parametrize("n_units", [None, 40])
def test_a_corpus_with_no_word_of_a_public_list_decides_and_spends_as_its_neighbour_with_one(tmp_path, ledgers,
                                                                                              n_units):
    """Whether a corpus holds a word of the list is private: a corpus none of whose 40 users has a word of it goes
    through the same count (drawn, or stated), decision and mechanism as its neighbour in which one user has words,
    and releases (noise only) where that neighbour releases, with the same lines printed and the same entries
    spent. It was refused, while the neighbour was released."""
    outcomes = []
    for first in ("zz yy xx qq", " ".join(WORDS[:20])):
        path = tmp_path / "corpus.jsonl"
        path.write_text("".join(json.dumps({"user": f"u{u}", "text": first if u == 0 else "zz yy xx qq"}) + "\n"
                                for u in range(40)))
        ledgers.clear()
        lines: list = []
        result = release(_request(str(path), vocabulary=VocabularyPolicy.public(WORDS), n_units=n_units),
                         echo=lines.append)
        assert len(ledgers) == 1 and result.release.topic_word.shape == (3, len(WORDS))
        outcomes.append((lines, [(e.name, e.sigma, e.sensitivity) for e in ledgers[0].records]))
    assert outcomes[0] == outcomes[1]
    assert [name for name, _, _ in outcomes[0][1]][:1] == (["unit count"] if n_units is None else ["dp-vem"])


def _shards(tmp_path, n_users: int = 240) -> str:
    lines = _lines(n_users)
    shards = tmp_path / "shards"
    shards.mkdir()
    for i in range(3):  # 3 documents per user: cuts at multiples of 3 keep every user in one shard
        part = lines[i * len(lines) // 3:(i + 1) * len(lines) // 3]
        (shards / f"part-{i}.jsonl").write_text("\n".join(part) + "\n")
    return str(shards)


@pytest.mark.parametrize("vocabulary", ["public", "dp"])
def test_a_shard_gone_after_the_census_is_refused_before_any_spend(tmp_path, ledgers, monkeypatch, vocabulary):
    from topicdp.pipeline.sources import ShardedSource

    shards = _shards(tmp_path)
    census = ShardedSource.census

    def census_then_remove(self):
        n = census(self)
        os.remove(self.paths[1])
        return n

    monkeypatch.setattr(ShardedSource, "census", census_then_remove)
    policy = VocabularyPolicy.public(WORDS) if vocabulary == "public" else VocabularyPolicy.dp(max_features=100)
    refusal = _refused(_request(shards, vocabulary=policy), ledgers)
    assert "part-1.jsonl" in str(refusal) and ledgers[0].records == ()


def test_a_shard_gone_after_the_vocabulary_names_the_count_and_the_vocabulary(tmp_path, ledgers, monkeypatch):
    """The preparation re-reads the text shards after the DP vocabulary: a shard removed in between stops the
    release with what was spent, not a bare FileNotFoundError."""
    from topicdp.pipeline.sources import ShardedSource

    shards = _shards(tmp_path)
    select = ShardedSource.select_vocabulary

    def select_then_remove(self, **kwargs):
        selection = select(self, **kwargs)
        os.remove(self.paths[1])
        return selection

    monkeypatch.setattr(ShardedSource, "select_vocabulary", select_then_remove)
    refusal = _refused(_request(shards, epsilon=8.0, release_anyway=True), ledgers)
    assert len(refusal.spent) == 2 and "part-1.jsonl" in str(refusal)


def test_an_interruption_after_a_spend_says_what_was_spent(corpus_file, ledgers, monkeypatch, tmp_path, capsys):
    """Ctrl-C (or SIGTERM, which unwinds as it) during the topics' step: nothing is published, and the one line the
    command prints names the spends the ledger had recorded."""
    from topicdp.cli import main

    def interrupted(ledger, n_units):
        raise KeyboardInterrupt

    row = run_module.MECHANISMS["dp-vem"]
    monkeypatch.setitem(run_module.MECHANISMS, "dp-vem", failing_row(row, interrupted))
    words = tmp_path / "words.txt"
    words.write_text("\n".join(WORDS) + "\n")
    out = tmp_path / "release.json"
    code = main(["privatize", corpus_file, "--vocabulary", str(words), "--topics", "3", "--mechanism", "dp-vem",
                 "--release-anyway", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and not out.exists()
    assert err[-1].startswith("topicdp: interrupted; nothing was published")
    assert "only the unit count (epsilon=" in err[-1] and "spent its budget" in err[-1]


def test_sharded_shards_without_a_document_decide_as_a_neighbour_with_one_document(tmp_path, ledgers):
    """The sharded twin of the in-memory source: shards holding no document are not refused for it (whether a
    corpus is empty is private) but go through the DP count and the decision as shards holding one document do:
    refused by the forecast on that count alike, the count the only step spent, and released alike (noise only)
    when the owner insists. They were refused for holding no document."""
    outcomes = []
    for one in ("", json.dumps({"user": "u0", "text": " ".join(WORDS[:30])}) + "\n"):
        shards = tmp_path / ("one-shards" if one else "empty-shards")
        shards.mkdir()
        for i in range(2):
            (shards / f"part-{i}.jsonl").write_text(one if i == 0 else "")
        ledgers.clear()
        refusal = _refused(_request(str(shards), vocabulary=VocabularyPolicy.public(WORDS)), ledgers)
        assert "the forecast says" in str(refusal) and [e.name for e in ledgers[0].records] == ["unit count"]
        ledgers.clear()
        forced = release(_request(str(shards), vocabulary=VocabularyPolicy.public(WORDS), release_anyway=True),
                         echo=lambda line: None)
        assert forced.release.topic_word.shape == (3, len(WORDS))
        outcomes.append((str(refusal), [(e.name, e.sigma) for e in ledgers[0].records]))
    assert outcomes[0] == outcomes[1]