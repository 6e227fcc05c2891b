"""DPSpectralMoments: the four configurations run, their accounting adds up, preconditions raise."""

import math

import numpy as np
import pytest

from topicdp.datasets import synthetic_lda
from topicdp.metrics import recovery_error
from topicdp.report import PrivacyReport
from topicdp.rdp import PrivacyLedger
from topicdp import Corpus
from topicdp.spectral import PreconditionError, DPSpectralMoments, recommend_configuration
from topicdp.spectral.accounting import DEFAULT_SPLITS
from facts import raises_facts

# one generated corpus is released by every configuration and accounting: the repeated-release warning
# is expected here (elsewhere it is an error, pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


@pytest.fixture(scope="module")
def small():
    return synthetic_lda(20_000, 30, 3, alpha0=1.0, random_state=1)


def _ledger_from(report):
    led = PrivacyLedger()
    for r in report.composition:
        if r["kind"] == "gaussian":
            led.add_gaussian(r["name"], r["sigma"], r["sensitivity"])
        else:
            led.add_laplace(r["name"], r["scale"], r["sensitivity"])
            led.add_approx(r["name"] + " failure", 0.0, r["failure_probability"])
    return led


@pytest.mark.parametrize("cfg", [1, 2, 3, 4])
@pytest.mark.parametrize("accounting", ["simple", "rdp", "auto"])
def test_configuration_runs_and_accounting_adds_up(small, cfg, accounting):
    eps, delta = 1000.0, 1e-6
    m = DPSpectralMoments(3, 1.0, cfg, epsilon=eps, delta=delta, unit="document", random_state=0, accounting=accounting).fit(small.X)
    rep = m.report_
    assert m.topic_word_.shape == (3, 30) and np.all(np.isfinite(m.topic_word_))
    assert np.allclose(m.topic_word_.sum(axis=1), 1) and np.all(m.topic_word_ >= 0)
    assert np.all(np.isfinite(m.alpha_)) and np.all(m.alpha_ > 0)
    assert recovery_error(m.topic_word_, small.topic_word) < (0.2 if cfg < 4 else 0.8)
    names = {r["name"] for r in rep.composition}
    assert names == set(DEFAULT_SPLITS[cfg])
    # the per-release shares add up to the budget
    assert math.isclose(sum(r["epsilon_share"] for r in rep.composition), eps, rel_tol=1e-12)
    deltas = [r.get("delta_share", r.get("failure_probability")) for r in rep.composition]
    deltas = [r["delta_share"] for r in rep.composition if r["kind"] == "gaussian"]
    fails = [r["failure_probability"] for r in rep.composition if r["kind"] == "laplace"]
    assert math.isclose(sum(deltas) + sum(fails), delta, rel_tol=1e-12)
    # recomputing the totals from the recorded releases gives the reported ones
    totals = _ledger_from(rep).totals(delta)
    assert {t["accounting"]: t["epsilon"] for t in rep.composition_total} == totals
    if accounting == "simple":
        assert math.isclose(totals["simple"], eps, rel_tol=1e-9)
    elif accounting == "auto" and cfg <= 2:  # all-Gaussian: exact GDP composition meets the budget exactly
        assert rep.calibration == "exact"
        assert math.isclose(totals["exact"], eps, rel_tol=1e-6)
    else:
        assert rep.calibration == "rdp"
        assert math.isclose(totals["rdp"], eps, rel_tol=1e-6)
    assert rep.epsilon <= eps * (1 + 1e-9) and rep.delta == delta
    assert rep.guarantee == "approx-DP" and rep.unit == "document" and rep.seeded
    assert PrivacyReport.from_json(rep.to_json()).to_dict() == rep.to_dict()
    assert rep.details["n_documents"] == 20_000 and "n_short_documents" not in rep.details  # the public N only
    assert m.release_.diagnostics["n_short_documents"] == 0  # a private count: the owner's diagnostics


def test_user_level_per_user_weighting(small):
    """unit="user": U public, sensitivities from U only, the same release from a Corpus or a matrix + users."""
    users = np.arange(20_000) % 1000  # 20 documents per user
    m = DPSpectralMoments(3, 1.0, 2, epsilon=30.0, delta=1e-6, random_state=0, unit="user", strict=False).fit(small.X, users=users)
    rep = m.report_
    assert rep.unit == "user" and m.n_units_ == 1000
    assert "n_documents" not in rep.details and rep.details["n_users"] == 1000
    assert math.isclose(rep.details["Delta2"], math.sqrt(2 + 4 * 0.25) / 1000)
    assert rep.epsilon <= 30.0 * (1 + 1e-9) and rep.delta == 1e-6
    assert any("replacing all documents of one user" in n and "U" in n for n in rep.notes)
    corpus = Corpus.from_matrix(small.X, [f"w{i}" for i in range(30)], users=users)
    m2 = DPSpectralMoments(3, 1.0, 2, epsilon=30.0, delta=1e-6, random_state=0, unit="user", strict=False).fit(corpus)
    assert np.array_equal(m.topic_word_, m2.topic_word_)
    # utility at user level (config 1, eps = 100, U = 1000): the noise scales as 1/(U eps), 20x the
    # document level's here; with these seeds the error is 0.06, and 0.15 leaves room for platform rounding
    u = DPSpectralMoments(3, 1.0, 1, epsilon=100.0, delta=1e-6, random_state=0, unit="user", strict=False).fit(small.X, users=users)
    assert recovery_error(u.topic_word_, small.topic_word) < 0.15
    with pytest.raises(ValueError, match="unit='user' .*needs"):
        DPSpectralMoments(3, 1.0, 2, epsilon=30.0, delta=1e-6, unit="user").fit(small.X)
    with pytest.raises(ValueError, match="unit"):
        DPSpectralMoments(3, 1.0, 2, epsilon=30.0, delta=1e-6, unit="group").fit(small.X)


def test_defaults_are_the_librarys_and_the_positional_order_is_kept(small):
    from topicdp._names import DEFAULT_DELTA, DEFAULT_EPSILON, DEFAULT_UNIT

    params = DPSpectralMoments().get_params()
    assert (params["epsilon"], params["delta"], params["unit"]) == (DEFAULT_EPSILON, DEFAULT_DELTA, DEFAULT_UNIT)
    assert (params["n_topics"], params["alpha0"], params["configuration"]) == (10, 1.0, 1)
    m = DPSpectralMoments(3, 2.0, 4, epsilon=30.0, delta=1e-7, random_state=5)
    assert (m.n_topics, m.alpha0, m.configuration, m.epsilon, m.delta, m.random_state) == (3, 2.0, 4, 30.0, 1e-7, 5)
    # at the default user level, a matrix without owners is refused with a message naming both ways out
    with pytest.raises(ValueError, match="unit='user' \\(the default\\).*users=.*unit='document'"):
        DPSpectralMoments(3).fit(small.X)
    with raises_facts(ValueError, "epsilon", "(0, inf)", "got None", "SpectralLDA", ordered=True):
        DPSpectralMoments(3, epsilon=None, unit="document").fit(small.X)


def test_document_level_accepts_a_corpus(small):
    corpus = Corpus.from_matrix(small.X[:2000], [f"w{i}" for i in range(30)])
    a = DPSpectralMoments(3, 1.0, 1, epsilon=50.0, delta=1e-6, unit="document", random_state=0).fit(corpus)
    b = DPSpectralMoments(3, 1.0, 1, epsilon=50.0, delta=1e-6, unit="document", random_state=0).fit(small.X[:2000])
    assert np.array_equal(a.topic_word_, b.topic_word_) and a.report_.unit == "document"


def test_fewer_than_k_positive_eigenvalues_in_released_m2_raises():
    """With 5 words and k = 4 the released M2 at a tiny epsilon is essentially a 5 x 5 Wigner matrix,
    which has fewer than 4 positive eigenvalues for this seed."""
    data = synthetic_lda(300, 5, 4, random_state=0)
    with pytest.raises(PreconditionError, match="positive eigenvalue"):
        DPSpectralMoments(4, 1.0, 2, epsilon=0.01, delta=1e-6, unit="document", random_state=1).fit(data.X)


def test_private_eigengap_bound_failure_raises(small):
    with pytest.raises(PreconditionError, match="eigengap lower bound > 0.*more documents"):
        DPSpectralMoments(3, 1.0, 3, epsilon=5.0, delta=1e-6, unit="document", random_state=0, strict=False).fit(small.X)


def test_table3_preconditions_raise_when_strict(small):
    with pytest.raises(PreconditionError, match="Table 3|utility"):
        DPSpectralMoments(3, 1.0, 2, epsilon=0.1, delta=1e-6, unit="document", random_state=0).fit(small.X)
    m = DPSpectralMoments(3, 1.0, 2, epsilon=0.1, delta=1e-6, unit="document", random_state=0, strict=False).fit(small.X)
    failed = [c for c in m.report_.checks if not c.passed]
    assert failed and all(np.isfinite(m.topic_word_).ravel())
    with pytest.raises(PreconditionError, match="Table 3"):
        # gap bound > 0, perturbation 0.77
        DPSpectralMoments(3, 1.0, 3, epsilon=20.0, delta=1e-6, unit="document", random_state=0).fit(small.X)


@pytest.mark.parametrize("kwargs,match", [
    ({"configuration": 5}, "configuration"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"delta": 1.0}, "delta"),
    ({"n_topics": 1}, "n_topics"),
    ({"alpha0": -1.0}, "alpha0"),
    ({"accounting": "advanced"}, "accounting"),
    ({"split": {"e6": 1.0}}, "split"),
])
def test_bad_parameters(small, kwargs, match):
    params = dict(n_topics=3, alpha0=1.0, configuration=2, epsilon=1.0, delta=1e-6, unit="document")
    params.update(kwargs)
    with pytest.raises(ValueError, match=match):
        DPSpectralMoments(**params).fit(small.X[:500])


def test_recommendation_says_why():
    rec = recommend_configuration(100_000, 500, 10, 1.0)
    assert rec.configuration in (1, 2, 3, 4) and len(rec.reasons) >= 2
    assert set(rec.predicted_noise) == {1, 2, 3, 4}
    assert "Remark" in " ".join(rec.reasons) or "Sec. 7" in " ".join(rec.reasons)
    # simple accounting, epsilon where config 1's two M2 releases swamp the whitening but config 2's does not
    assert recommend_configuration(10_000, 100, 5, 1.0, accounting="simple", epsilon=3, delta=1e-7).configuration == 2
    assert recommend_configuration(10_000, 100, 5, 1.0, accounting="simple", epsilon=50, delta=1e-7).configuration == 1
    with pytest.raises(ValueError, match="n_topics"):
        recommend_configuration(1000, 10, 10, 1.0)


@pytest.mark.parametrize("cfg,released", [(1, {"e3"}), (2, {"e6"}), (3, {"p1_gap", "p1_norm", "e7"})])
def test_public_whitening_spends_the_whole_budget_on_the_tensor(small, cfg, released):
    """A public reference (other documents of the same model) gives W: no M2 release, the budget adds up."""
    public = synthetic_lda(20_000, 30, 3, alpha0=1.0, random_state=2, topic_word=small.topic_word).X
    m = DPSpectralMoments(3, 1.0, cfg, epsilon=50.0, delta=1e-6, unit="document", random_state=0, public_whitening=public,
                   strict=False).fit(small.X)
    rep = m.report_
    assert {r["name"] for r in rep.composition} == released
    assert rep.details["whitening"] == "public reference corpus" and "released_m2_eigenvalues" not in rep.details
    assert math.isclose(sum(r["epsilon_share"] for r in rep.composition), 50.0, rel_tol=1e-12)
    assert rep.epsilon <= 50.0 * (1 + 1e-9)
    assert any("public reference corpus" in n for n in rep.notes)
    assert recovery_error(m.topic_word_, small.topic_word) < 0.3


def test_public_whitening_beats_a_released_m2_at_small_epsilon(small):
    """At epsilon = 2 the released M2 of config 2 is mostly noise (its check fails); with W from public data
    the same budget on the tensor alone recovers the topics better (same noise seeds)."""
    public = synthetic_lda(20_000, 30, 3, alpha0=1.0, random_state=2, topic_word=small.topic_word).X
    errs = {}
    for name, pub in (("released", None), ("public", public)):
        m = DPSpectralMoments(3, 1.0, 2, epsilon=2.0, delta=1e-6, unit="document", random_state=0, public_whitening=pub,
                       strict=False).fit(small.X)
        errs[name] = recovery_error(m.topic_word_, small.topic_word)
    assert errs["public"] < errs["released"]


def test_public_whitening_must_share_the_vocabulary(small):
    with pytest.raises(ValueError, match="public_whitening"):
        DPSpectralMoments(3, 1.0, 2, epsilon=5.0, delta=1e-6, unit="document", public_whitening=small.X[:, :20]).fit(small.X)
    priv = Corpus.from_matrix(small.X, [f"w{i}" for i in range(30)])
    pub = Corpus.from_matrix(small.X, [f"v{i}" for i in range(30)])
    with pytest.raises(ValueError, match="same vocabulary"):
        DPSpectralMoments(3, 1.0, 2, epsilon=5.0, delta=1e-6, unit="document", public_whitening=pub).fit(priv)


def test_user_level_public_whitening_release_saves_only_covered_fields(small, tmp_path):
    """Every report field of the new paths (U, the whitening's provenance) has a published status."""
    public = synthetic_lda(5_000, 30, 3, alpha0=1.0, random_state=2, topic_word=small.topic_word).X
    users = np.arange(20_000) % 1000
    for cfg, pub in ((1, None), (2, public)):
        m = DPSpectralMoments(3, 1.0, cfg, epsilon=100.0, delta=1e-6, random_state=0, unit="user", public_whitening=pub,
                       strict=False).fit(small.X, users=users)
        m.release_.save(tmp_path / f"release{cfg}.json")
        saved = (tmp_path / f"release{cfg}.json").read_text()
        assert '"n_users": 1000' in saved and "n_documents" not in saved
