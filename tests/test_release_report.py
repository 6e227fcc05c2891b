"""The pieces of the release contract: the report builder, the statuses, the schema validator, to_simplex."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from topicdp import Corpus
from topicdp.mechanisms.postprocess import project_to_simplex, to_simplex
from facts import assert_facts
from topicdp.private_release import FORMAT, SCHEMA, PrivateRelease, status_of, validate
from reports import make_report
from topicdp.report import PrivacyReport, total


def _report(**overrides) -> PrivacyReport:
    kwargs = dict(mechanism="m", guarantee="approx-DP", unit="user", neighbours="replace-one", epsilon=1.0,
                  delta=1e-5, seeded=False, published={"topic_word": "DP"},
                  composition_total=[total("rdp", 1.0, 1e-5), total("paper", 0.5, 1e-5, valid=False)])
    return make_report(**{**kwargs, **overrides})


def test_reports_are_frozen_once_built():
    rep = _report()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rep.sigma = 3.0  # type: ignore[misc]


def test_certified_epsilon_ignores_invalid_totals_and_larger_deltas():
    rep = _report(composition_total=[total("paper", 0.1, 1e-5, valid=False), total("rdp", 0.9, 1e-5),
                                     total("loose", 0.2, 1e-3)])
    assert rep.certified_epsilon() == 0.9
    assert _report(composition_total=[]).certified_epsilon() == float("inf")


@pytest.mark.parametrize("bad", [{"accounting": "rdp", "epsilon": 1.0}, {"rdp": 1.0, "epsilon": 1, "delta": 0,
                                                                         "accounting": "x"}])
def test_composition_total_has_one_schema(bad):
    with pytest.raises(ValueError, match="composition_total"):
        _report(composition_total=[bad])


def test_statuses_are_from_the_list():
    with pytest.raises(ValueError, match="published"):
        _report(published={"topic_word": "probably fine"})
    statuses = {"report.details": "public", "report.details.n": "DP: noisy count"}
    assert status_of("report.details.n", statuses).startswith("DP")
    assert status_of("report.details.other.x", statuses) == "public"
    assert status_of("report.detailsx", statuses) is None  # a prefix must end at a dot


def test_save_refuses_unlisted_fields_and_load_refuses_old_files(tmp_path):
    W = np.array([[0.5, 0.5]])
    rep = _report(details={"n_docs": 12})  # no status for report.details.n_docs
    release = PrivateRelease(topic_word=W, noisy=W, vocabulary=("a", "b"), report=rep)
    with pytest.raises(ValueError, match="report.details.n_docs"):
        release.save(tmp_path / "r.json")
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"topic_word": [[1.0]], "vocabulary": ["a"], "report": {}}))
    with pytest.raises(ValueError, match=FORMAT):
        PrivateRelease.load(old)


def test_the_schema_validator_rejects_what_it_should():
    release = PrivateRelease(topic_word=np.array([[1.0]]), noisy=None, vocabulary=("a",), report=_report())
    data = release.to_dict()
    validate(data, SCHEMA)
    for broken, match in [({**data, "format": "topicdp.release/1"}, "format"),
                          ({**data, "vocabulary": [1]}, "vocabulary"),
                          ({**data, "report": {**data["report"], "guarantee": "DP-ish"}}, "guarantee"),
                          ({**data, "report": {**data["report"], "epsilon": "one"}}, "epsilon"),
                          ({k: v for k, v in data.items() if k != "report"}, "report")]:
        with pytest.raises(ValueError, match=match):
            validate(broken, SCHEMA)


def test_one_to_simplex_for_both_roads():
    from topicdp.spectral import recovery

    assert recovery.to_simplex is to_simplex and recovery.project_to_simplex is project_to_simplex
    noisy = np.array([[0.6, -0.2, 0.3], [-1.0, -2.0, -0.5], [np.nan, 1.0, 1.0]])
    clipped, bad = to_simplex(noisy)
    assert bad == 2 and np.allclose(clipped[0], [2 / 3, 0, 1 / 3]) and np.allclose(clipped[1], 1 / 3)
    projected, _ = to_simplex(noisy[:1], method="project")
    # Euclidean projection of (0.6, -0.2, 0.3): theta = -0.05 on the support {0, 2}
    assert np.allclose(projected, [[0.65, 0.0, 0.35]])
    with pytest.raises(ValueError, match="method"):
        to_simplex(noisy, method="softmax")


def _summaries():
    """Reports of the roads a user meets: dp-vem (exact composition, several looser totals), Laplace (pure DP),
    TopicDP with a sampled sensitivity (random DP)."""
    from topicdp import CallableModel, TopicDP
    from topicdp.variational import DPVariationalEM
    from topicdp.datasets import synthetic_lda
    from topicdp.rdp import PrivacyLedger
    from topicdp.samplers import SensitivitySampling

    data = synthetic_lda(200, 30, 3, random_state=0)
    corpus = Corpus(X=data.X, vocabulary=[f"w{j}" for j in range(30)], doc_users=np.arange(200) // 2)
    uniform = CallableModel(lambda c: np.full((3, c.n_words), 1.0 / c.n_words), n_topics=3, name="uniform")
    counts = CallableModel(lambda c: np.tile((np.asarray(c.X.sum(axis=0)).ravel() + 1) / (c.X.sum() + c.n_words),
                                             (3, 1)), n_topics=3, name="word-frequencies")
    sampling = SensitivitySampling(corpus, 0.2, "exchangeable")  # 9 pairs
    return [DPVariationalEM(3, epsilon=3.0, random_state=0).fit(corpus, ledger=PrivacyLedger()).release_.report,
            TopicDP(uniform, epsilon=2.0, mechanism="laplace", sensitivity="global").fit(corpus, ledger=PrivacyLedger()).report_,
            TopicDP(counts, epsilon=2.0, delta=1e-5, sampling=sampling).fit(corpus, ledger=PrivacyLedger()).report_]


def test_the_summary_opens_with_the_certified_guarantee_and_labels_every_larger_total():
    for report in _summaries():
        lines = report.summary().splitlines()
        assert lines[0] == report.headline() and lines[0].startswith("guarantee ")
        certified = report.certified_epsilon()
        assert certified <= report.epsilon * (1 + 1e-9)
        assert f"{certified:.4g}" in lines[0]
        if report.guarantee == "random-DP":
            assert "NOT DP" in lines[0]
        # a total above the request stands only under "looser accounts"
        looser = lines.index("looser accounts, for comparison (not used):") if any(
            line.startswith("looser accounts") for line in lines) else len(lines)
        for i, line in enumerate(lines):
            for value in re.findall(r"epsilon (\d[\d.e+-]*)", line):
                if float(value) > report.epsilon * (1 + 1e-9):
                    assert i > looser and line.startswith("  "), line
        if report.sigma is not None:
            sigma_line = next(line for line in lines if line.startswith("sigma "))
            assert "std of" in sigma_line or "Laplace scale" in sigma_line


PUBLISHABLE = {"topic_word": "DP", "vocabulary": "public: a public word list",
               "report.composition_total": "public: functions of the stated parameters"}


def _saved(tmp_path, report) -> tuple:
    path = tmp_path / "release.json"
    PrivateRelease(topic_word=np.array([[0.5, 0.5]]), noisy=None, vocabulary=("a", "b"), report=report).save(path)
    return path, json.loads(path.read_text())


def _edited(path, data, **report) -> None:
    path.write_text(json.dumps({**data, "report": {**data["report"], **report}}))


def test_a_release_edited_to_claim_a_smaller_guarantee_is_refused(tmp_path):
    rep = _report(epsilon=3.0, composition_total=[total("rdp", 2.9, 1e-5), total("basic", 3.0, 1e-5)],
                  published=PUBLISHABLE)
    path, data = _saved(tmp_path, rep)
    assert PrivateRelease.load(path).report == rep  # unedited: loads
    _edited(path, data, epsilon=0.1)
    with pytest.raises(ValueError, match=r"report\.epsilon states 0\.1, but .*\(rdp\) is 2\.9") as err:
        PrivateRelease.load(path)
    assert str(path) in str(err.value)
    _edited(path, data, delta=1e-9)  # every proven total is then at a larger delta
    with pytest.raises(ValueError, match=r"report\.delta"):
        PrivateRelease.load(path)


def test_a_release_whose_statuses_disagree_is_refused(tmp_path):
    path, data = _saved(tmp_path, _report(published=PUBLISHABLE))
    _edited(path, data, details={"n_docs": 1234})  # a published field with no status
    with pytest.raises(ValueError, match=r"report\.details\.n_docs"):
        PrivateRelease.load(path)
    _edited(path, data, published={**data["report"]["published"], "topic_word": "random-DP: sampled"})
    with pytest.raises(ValueError, match=r"report\.published\['topic_word'\] is random-DP"):
        PrivateRelease.load(path)
    random_total = total("rdp", 1.0, 1e-5, guarantee="random-DP", gamma=0.1)
    _edited(path, data, composition_total=[random_total])
    with pytest.raises(ValueError, match=r"report\.guarantee states approx-DP"):
        PrivateRelease.load(path)


def test_float_noise_of_the_composition_is_not_a_disagreement(tmp_path):
    shares = 0.05 * 3.0 + 0.15 * 3.0 + 0.8 * 3.0  # 3.0000000000000004
    path, _ = _saved(tmp_path, _report(epsilon=3.0, composition_total=[total("basic", shares, 1e-5)],
                                       published=PUBLISHABLE))
    assert PrivateRelease.load(path).report.epsilon == 3.0
    path, _ = _saved(tmp_path, _report(epsilon=3.0, composition_total=[total("basic", 3.0 * (1 + 1e-6), 1e-5)],
                                       published=PUBLISHABLE))
    with pytest.raises(ValueError, match="report.epsilon"):
        PrivateRelease.load(path)

def test_accounts_that_differ_in_the_last_bits_agree():
    """Two accounts of 200 that differ in their last bits (the spectral e6 step calibrated on the released M2 meets
    its share only to rounding) agree: the composition line and the headline do not depend on those bits."""
    from topicdp.report import ACCOUNTS_RTOL, accounts_agree

    a = 200.0
    b = float(np.nextafter(np.nextafter(a, np.inf), np.inf))  # two ulps above: about 6e-17 relative
    assert a != b and accounts_agree(a, b) and accounts_agree(b, a)
    assert accounts_agree(a, a * (1 + 0.5 * ACCOUNTS_RTOL)) and not accounts_agree(a, a * (1 + 2 * ACCOUNTS_RTOL))
    assert not accounts_agree(200.0, 200.001) and not accounts_agree(1.0, float("inf"))
    assert accounts_agree(float("inf"), float("inf")) and accounts_agree(0.0, 0.0)
    lines = {}
    for exact in (a, b, float(np.nextafter(a, 0.0))):  # the exact account just above, at, or just below the steps'
        rep = _report(epsilon=a, composition_total=[total("basic composition of the steps", a, 1e-5),
                                                    total("exact", exact, 1e-5), total("best", exact, 1e-5)])
        lines[exact] = rep.summary().splitlines()
        assert lines[exact][0].endswith("(certified)")
        composition = next(line for line in lines[exact] if line.startswith("composition "))
        assert_facts(composition, "0 release(s)", "basic composition of the steps", "= exact = best", ordered=True)
        assert not any(line.startswith("looser accounts") for line in lines[exact])
    assert len({tuple(v) for v in lines.values()}) == 1  # the same lines whatever the last bits


@pytest.mark.parametrize("guarantee", ["approx-DP", "random-DP"])
def test_extending_a_report_is_composing_its_steps_in_one(guarantee):
    """A pipeline extends its mechanism's report (extend_report) instead of taking it apart and composing it again:
    the result must be that re-composition's, field for field and in the same key order (the random-DP caveat
    stays after the units' note, where the mechanism's report put it)."""
    from topicdp.report import REPORT_STATUSES, STEP_FIELDS, Check, ReportParts, compose_report, extend_report

    def parts_of(report):  # the report's own step, as the pipeline once took it apart
        return ReportParts({k: v for k, v in report.published.items() if REPORT_STATUSES.get(k) != v},
                           report.notes, report.checks, report.details,
                           {name: getattr(report, name) for name in STEP_FIELDS})

    topics = ReportParts({"topic_word": "post-processing", "report.sigma": "public: stated"}, ["topics note"],
                         [Check("topics", True)], {"model": {"k": 3}, "score": float("nan")},
                         {"sigma": 2.5, "sensitivity": 1.0, "gamma": 0.1 if guarantee == "random-DP" else None})
    statement = dict(guarantee=guarantee, unit="user", neighbours="add-remove", seeded=True)
    mechanism = compose_report(topics, mechanism="topicdp", epsilon=1.0, delta=1e-6, composition=[{"n": 1}],
                               composition_total=[total("rdp", 1.0, 1e-6)], **statement)
    plan = ReportParts({"report.details.plan": "public: the plan", "topic_word": "DP"}, checks=[Check("plan", False)],
                       details={"plan": {"n": np.int64(4)}, "model": {"k": 5}})
    whole = dict(mechanism="pipeline", epsilon=np.float64(2.0), delta=2e-6, composition=[{"n": np.int64(2)}],
                 composition_total=[total("basic", 2.0, 2e-6)])
    extended = extend_report(mechanism, plan, notes_first=["units note"], **whole)
    once = compose_report(ReportParts(notes=["units note"]), parts_of(mechanism), plan, **statement, **whole)
    assert extended == once
    assert json.dumps(extended.to_dict()) == json.dumps(once.to_dict())  # key order too
    assert extended.notes[0] == "units note" and extended.details["model"] == {"k": 5}
    assert [c.name for c in extended.checks] == ["topics", "plan"] and extended.published["topic_word"] == "DP"
