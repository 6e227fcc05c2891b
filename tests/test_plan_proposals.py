"""Before refusing, the plan forecasts the configurations that cost no privacy to try and proposes the one forecast
readable, with the command that runs it; none where nothing helps. The random-DP road's pilot refuses early.

The corpora are the three-block users of ``tests/corpora.py`` (60 words in three blocks of twenty; every document one
block): with many documents per user, K = 3 at epsilon 3 is noise at the user level (a user moves all its documents)
and readable at the document level, which the simulation on a public reference P of the same kind forecasts. The
proposed command is run as printed (``topicdp.cli.main``) and must not be refused.
"""

from __future__ import annotations

import json
import shlex

import pytest

import topicdp
from corpora import three_block_texts
from topicdp.pipeline import ReleaseRefused
from topicdp.pipeline.proposal import MAX_CONFIGURATIONS, command_line, configurations

#: the proposal sentence's key facts
PROPOSED, NONE = "Proposed, at no privacy cost to try", "No configuration that costs no privacy to try"


def _write(path, n_users: int, docs: int, seed: int) -> str:
    rows = [json.dumps({"user": f"s{seed}u{u}", "text": text})
            for u, _, text in three_block_texts(n_users, docs, size=30, seed=seed)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("proposals")
    return _write(d / "private.jsonl", 40, 40, 1), _write(d / "reference.jsonl", 40, 40, 2)


def _refusal(corpus, epsilon: float = 3.0, **kw) -> str:
    with pytest.raises(ReleaseRefused) as info:
        topicdp.release(corpus, n_topics=3, epsilon=epsilon, seed=0, n_jobs=1, echo=lambda line: None, **kw)
    return str(info.value)


def _command(message: str) -> list[str]:
    command = message.split("Run (a new release, charged as any): ", 1)[1].split(" (from Python:", 1)[0]
    return shlex.split(command)[1:]


def test_a_user_level_refusal_proposes_the_document_level_with_a_command_that_is_not_refused(files, tmp_path,
                                                                                               capsys):
    private, reference = files
    message = _refusal(private, reference=reference)
    assert PROPOSED in message and "the document level" in message
    assert "not a user" in message  # the proposal says that it changes the guarantee
    assert "unit='document'" in message  # the Python keywords
    words = _command(message)
    assert words[:2] == ["privatize", private] and "--unit" in words and "document" in words
    from topicdp.cli import main

    out = tmp_path / "release.json"
    assert main(words + ["--out", str(out)]) == 0
    assert out.exists()
    assert "refused" not in capsys.readouterr().err
    # the same sentence in the report of the release forced past the refusal (one function builds it)
    forced = topicdp.release(private, reference=reference, n_topics=3, epsilon=3.0, seed=0, n_jobs=1,
                               release_anyway=True, echo=lambda line: None)
    proposal = forced.report.details["plan"]["decision"]["proposal"]
    # the same sentence, but the published report names the owner's files by placeholders, not their paths
    assert private not in proposal and reference not in proposal and "privatize CORPUS" in proposal
    assert "--reference REFERENCE" in proposal
    assert proposal.startswith(PROPOSED) and proposal.rstrip(".") in message.replace(private, "CORPUS").replace(
        reference, "REFERENCE")


def test_nothing_is_proposed_when_nothing_helps(tmp_path):
    # 20 users of 2 documents at epsilon 0.05: the document level has 40 documents, and the noise of every
    # configuration is about 60x the noise at epsilon 3 (sigma ~ 1/epsilon), far beyond what 40 units carry
    private = _write(tmp_path / "tiny.jsonl", 20, 2, 3)
    reference = _write(tmp_path / "tiny_ref.jsonl", 20, 2, 4)
    message = _refusal(private, epsilon=0.05, reference=reference)
    assert NONE in message and PROPOSED not in message
    assert "the document level: " in message  # what was tried is named, with its verdict


def test_the_configurations_are_bounded_and_the_command_restates_the_request(files):
    from topicdp.pipeline.options import request_from_options
    from topicdp.pipeline.plan import Decision, UnitCount, plan_request

    private, reference = files
    kw = dict(n_topics=3, epsilon=3.0, delta=1e-6, unit="user", vocabulary=None, reference=reference, n_units=None,
              guarantee="dp", mechanism=None, ledger=None, out=None, release_anyway=False, seed=0, text_field="text",
              user_field="user", query=None, user_fraction=0.5, max_docs_per_user=20, max_tokens_per_doc=None,
              max_tokens_per_user=None, stop_words="web", max_features=5000, min_df=5, max_df=0.5,
              vocabulary_epsilon=0.5, vocabulary_delta=None, n_jobs=1, scheduler=None, work_dir=None, agnostic=None,
              keep_nonprivate=False)
    request = request_from_options(private, **kw)
    # the command names every option that differs from the defaults, and parses back to the same request
    from topicdp.cli import build_parser

    args = build_parser().parse_args(shlex.split(command_line(request))[1:])
    assert (args.user_fraction, args.max_docs_per_user, args.vocabulary_epsilon, args.stop_words) == (0.5, 20, 0.5,
                                                                                                      "web")
    from topicdp.pipeline.run import read_reference

    plan = plan_request(request, read_reference(request))  # with P: a DP selection's sizes are forecast from it
    decision = Decision("dp-vem", "rule", UnitCount(1000, "stated"), 5000, {})
    tried = configurations(decision, plan)
    assert len(tried) <= MAX_CONFIGURATIONS
    labels = [c.label for c in tried]
    assert labels[0].startswith("P's 5000 most frequent words instead of a DP selection")
    assert labels[-1] == "the document level" and tried[-1].guarantee_note is not None
    assert [c.changes.get("max_features") for c in tried[1:-1]] == [2000, 1000, 500]


def test_the_random_dp_pilot_refuses_before_the_full_sample(monkeypatch):
    import topicdp.pipeline.roads as run_module
    from topicdp.samplers import sampler

    pairs: list[int] = []
    real = sampler.draw_pairs

    def counted(distribution, n_records, seed, h):
        pairs.append(h)
        return real(distribution, n_records, seed, h)

    monkeypatch.setattr(sampler, "draw_pairs", counted)
    from topicdp import TopicDP
    from topicdp.adapters import make_model
    from topicdp.samplers import SensitivitySampling

    # the exchangeable sizing (9 pairs) bounds what the test would fit if the pilot did not refuse
    template = TopicDP(make_model("gensim-lda", 3, 0), sampling=SensitivitySampling(sizing="exchangeable",
                                                                                     random_state=0))
    lines: list[str] = []
    with pytest.raises(ReleaseRefused) as info:
        topicdp.release("embedded", n_topics=3, epsilon=0.5, unit="user", guarantee="random-dp",
                          reference="embedded", agnostic=template, seed=0, n_jobs=1, echo=lines.append)
    message = str(info.value)
    assert "pilot" in message and f"first {run_module.PILOT_PAIRS} of" in message and "were not run" in message
    assert pairs == [run_module.PILOT_PAIRS]  # the full sample was never drawn
    assert any(line.startswith("pilot: ") for line in lines)
