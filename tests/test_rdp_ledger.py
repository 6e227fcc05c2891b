"""PrivacyLedger: totals over heterogeneous releases."""

from __future__ import annotations

import json
import math

import dp_accounting
import pytest
from dp_accounting.rdp import RdpAccountant

import topicdp.rdp as rdp
from rdp_reference import gaussian_rdp

DELTA = 1e-5


def test_equal_gaussians_compose_like_count():
    ledger = rdp.PrivacyLedger()
    for i in range(7):
        ledger.add_gaussian(f"release {i}", sigma=3.0, sensitivity=0.5)
    single = rdp.PrivacyLedger()
    single.add_gaussian("all", sigma=3.0, sensitivity=0.5, count=7)
    expected = rdp.gaussian_epsilon(3.0, DELTA, 0.5, count=7, method="rdp")
    assert ledger.epsilon(DELTA) == pytest.approx(expected, rel=1e-9)
    assert single.epsilon(DELTA) == pytest.approx(expected, rel=1e-12)
    assert ledger.epsilon(DELTA, "exact") == pytest.approx(
        rdp.gaussian_epsilon(3.0, DELTA, 0.5, count=7, method="exact"), rel=1e-12)


def test_exact_is_the_gdp_closed_form():
    """Heterogeneous Gaussians: mu = sqrt(sum count_i (D_i/sigma_i)^2) (Dong, Roth & Su, Cor. 3.3);
    compare with the profile of that mu inverted independently (scipy.stats.norm, brentq)."""
    from scipy import optimize
    from scipy.stats import norm

    spec = [(1.0, 1.0, 1), (2.0, 0.5, 3), (5.0, 2.0, 10)]
    ledger = rdp.PrivacyLedger()
    for i, (s, d, j) in enumerate(spec):
        ledger.add_gaussian(f"g{i}", s, d, j)
    mu = math.sqrt(sum(j * (d / s) ** 2 for s, d, j in spec))

    def prof(e):
        return norm.cdf(mu / 2 - e / mu) - math.exp(e) * norm.cdf(-mu / 2 - e / mu) - DELTA

    ref = optimize.brentq(prof, 0.0, 50.0, xtol=1e-14)
    assert ledger.epsilon(DELTA, "exact") == pytest.approx(ref, rel=1e-8)
    assert ledger.epsilon(DELTA, "exact") <= ledger.epsilon(DELTA, "rdp")


def test_simple_at_least_rdp_when_many_releases():
    """Basic composition grows linearly in the number of releases, RDP like its square root: with 20
    Gaussian releases (and a couple of pure ones) simple composition must be the larger."""
    ledger = rdp.PrivacyLedger()
    for i in range(20):
        ledger.add_gaussian(f"g{i}", sigma=4.0, sensitivity=1.0)
    ledger.add_pure("count", 0.1)
    ledger.add_laplace("histogram", scale=20.0, sensitivity=1.0)
    assert ledger.epsilon(DELTA, "simple") >= ledger.epsilon(DELTA, "rdp")
    assert ledger.epsilon(DELTA, "best") == ledger.epsilon(DELTA, "rdp")


def test_simple_single_gaussian_is_exact():
    ledger = rdp.PrivacyLedger()
    ledger.add_gaussian("only", 2.0, 1.0, count=4)
    assert ledger.epsilon(DELTA, "simple") == pytest.approx(
        rdp.gaussian_epsilon(2.0, DELTA, 1.0, 4, method="exact"), rel=1e-12)


def test_simple_convention_equal_delta_shares():
    ledger = rdp.PrivacyLedger()
    ledger.add_gaussian("a", 2.0, 1.0)
    ledger.add_gaussian("b", 5.0, 1.0, count=3)
    ledger.add_laplace("c", 4.0, 2.0)
    ledger.add_pure("d", 0.3)
    ledger.add_approx("e", 0.2, 2e-6)
    share = (DELTA - 2e-6) / 2
    expected = (rdp.gaussian_epsilon(2.0, share, method="exact")
                + rdp.gaussian_epsilon(5.0, share, count=3, method="exact") + 0.5 + 0.3 + 0.2)
    assert ledger.epsilon(DELTA, "simple") == pytest.approx(expected, rel=1e-12)


def test_rdp_with_approx_entries_uses_basic_composition():
    ledger = rdp.PrivacyLedger()
    ledger.add_gaussian("a", 2.0, 1.0)
    ledger.add_laplace("b", 4.0, 1.0)
    ledger.add_approx("c", 0.25, 4e-6)
    curve = lambda a: gaussian_rdp(a, 2.0) + rdp.laplace_rdp(a, 4.0)  # noqa: E731
    expected = rdp.rdp_to_dp(curve, DELTA - 4e-6)[0] + 0.25
    assert ledger.epsilon(DELTA) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="delta"):
        ledger.epsilon(4e-6)


def test_mixed_ledger_vs_rdp_accountant():
    """Gaussian + Laplace composition: dp-accounting on its order grid can only be looser."""
    ledger = rdp.PrivacyLedger()
    ledger.add_gaussian("g", sigma=1.5, sensitivity=1.0, count=5)
    ledger.add_laplace("l", scale=2.0, sensitivity=1.0)
    acc = RdpAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(1.5), 5)
    acc.compose(dp_accounting.LaplaceDpEvent(2.0))
    theirs = acc.get_epsilon(DELTA)
    ours = ledger.epsilon(DELTA)
    assert ours <= theirs * (1 + 1e-12)
    assert theirs <= ours * 1.07  # see test_rdp_accounting: doubling order grid above 63 costs <= 6.1%


def test_pure_only_ledger():
    ledger = rdp.PrivacyLedger()
    ledger.add_pure("a", 0.5)
    ledger.add_pure("b", 0.5)
    assert ledger.epsilon(DELTA, "simple") == pytest.approx(1.0)
    assert ledger.epsilon(DELTA, "best") <= 1.0
    assert ledger.rdp(1e9) == pytest.approx(1.0)  # the RDP curve of pure entries never exceeds sum eps
    with pytest.raises(ValueError, match="method"):
        ledger.epsilon(DELTA, "exact")


def test_entries_and_totals_are_json_serialisable():
    ledger = rdp.PrivacyLedger()
    ledger.add_gaussian("matrix", 2.0, 0.3, count=2)
    ledger.add_laplace("count", 10.0, 1.0)
    ledger.add_pure("vocab", 0.1)
    ledger.add_approx("sampler", 0.05, 1e-7)
    entries = ledger.entries()
    assert [e["kind"] for e in entries] == ["gaussian", "laplace", "pure", "approx"]
    assert entries[0] == {"name": "matrix", "sigma": 2.0, "sensitivity": 0.3, "count": 2, "kind": "gaussian"}
    totals = ledger.totals(DELTA)
    assert set(totals) == {"rdp", "simple", "best"}
    json.loads(json.dumps({"entries": entries, "totals": totals}))
    assert len(ledger) == 4


def test_empty_ledger():
    ledger = rdp.PrivacyLedger()
    for m in rdp.LEDGER_METHODS:
        assert ledger.epsilon(DELTA, m) == 0.0


def test_discrete_gaussian_entry_is_rho_zcdp_and_matches_dp_accounting():
    """rho = count (Delta^Z)^2 / (2 s^2); as an RDP curve it equals a Gaussian of noise multiplier s / Delta^Z,
    which dp-accounting composes on its order grid (so it can only be looser than our continuous order)."""
    s, dz, count = 37.0, 12.5, 3
    ledger = rdp.PrivacyLedger()
    ledger.add_discrete_gaussian("secure", scale_units=s, sensitivity_units=dz, count=count)
    rho = count * dz**2 / (2 * s**2)
    assert ledger.rdp(7.0) == pytest.approx(7.0 * rho, rel=1e-12)
    acc = RdpAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(s / dz), count)
    theirs, ours = acc.get_epsilon(DELTA), ledger.epsilon(DELTA)
    assert ours <= theirs * (1 + 1e-12) and theirs <= ours * 1.07
    # one entry: basic composition is its own RDP conversion
    assert ledger.epsilon(DELTA, "simple") == pytest.approx(ours, rel=1e-9)
    # the continuous exact profile is not proven for the multivariate discrete Gaussian: no 'exact' total
    assert set(ledger.totals(DELTA)) == {"rdp", "simple", "best"}
    with pytest.raises(ValueError, match="continuous Gaussian"):
        ledger.epsilon(DELTA, "exact")
    assert ledger.entries() == [{"name": "secure", "scale_units": s, "sensitivity_units": dz, "count": count,
                                 "kind": "discrete-gaussian"}]


def test_topicdp_secure_noise_composes_the_true_discrete_rho(lee_corpus):
    """Two secure-noise releases: the ledger must hold rho = (Delta^Z)^2 / (2 s^2) with the rounded-up grid
    sensitivity Delta^Z = Delta / g + sqrt(K V), recomputed here from the report, and compose it like
    dp-accounting does. Recording (sigma, Delta) = (s g, Delta) instead understates rho by (g Delta^Z / Delta)^2."""
    import numpy as np

    from topicdp import GensimLDA, PrivacyLedger, TopicDP

    small = lee_corpus.subset_documents(np.arange(60))
    dp = TopicDP(GensimLDA(3, random_state=0), epsilon=2.0, delta=DELTA, sensitivity="global", secure_noise=True, random_state=3)
    ledger = PrivacyLedger()  # shared by the two releases of the same data
    dp.fit(small, ledger=ledger)
    rel = dp.fit(small, ledger=ledger).release_
    rep, info = rel.report, rel.report.details["secure_noise"]
    dz = rep.sensitivity / info["grid"] + math.sqrt(rel.noisy.size)  # Delta/g + sqrt(m), as secure_gaussian bounds it
    rho = dz**2 / (2 * info["scale_units"] ** 2)
    assert info["sensitivity_units"] == pytest.approx(dz, rel=1e-12) and info["rho"] == pytest.approx(rho, rel=1e-12)
    assert [e["kind"] for e in rep.composition] == ["discrete-gaussian", "discrete-gaussian"]
    assert ledger.rdp(3.0) == pytest.approx(3.0 * 2 * rho, rel=1e-12)
    acc = RdpAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(info["scale_units"] / dz), 2)
    totals = {t["accounting"]: t["epsilon"] for t in rep.composition_total}  # the one composition_total schema
    ours = totals["rdp"]
    assert ours <= acc.get_epsilon(DELTA) * (1 + 1e-12) and acc.get_epsilon(DELTA) <= ours * 1.07
    assert not any("exact" in key for key in totals)
    # what the (s g, Delta) record gave: strictly less, i.e. optimistic
    naive = rdp.PrivacyLedger()
    naive.add_gaussian("a", rep.sigma, rep.sensitivity, count=2)
    assert naive.epsilon(DELTA) < ours
