"""DP-SVI accounting: calibrated noise checked against freshly built dp-accounting accountants for the
sampling the code really does, and the paper's recipe (Park et al. Eqs. 3, 5, 6) by hand."""

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

from benchmarks.privacy.paper_baselines import paper_baseline_epsilon, paper_baseline_noise_multiplier
from topicdp.baselines import (
    DPStochasticVI,
    accountant_epsilon,
    calibrate_noise_multiplier,
    make_scheme,
    paper_epsilon,
    paper_noise_multiplier,
)

Rel = dp_accounting.NeighboringRelation


def rdp_poisson(q, z, steps, delta):
    acc = rdp_privacy_accountant.RdpAccountant(neighboring_relation=Rel.ADD_OR_REMOVE_ONE)
    acc.compose(dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)), steps))
    return acc.get_epsilon(delta)


def rdp_fixed(n, s, z, steps, delta):
    acc = rdp_privacy_accountant.RdpAccountant(neighboring_relation=Rel.REPLACE_ONE)
    event = dp_event.SampledWithoutReplacementDpEvent(n, s, dp_event.GaussianDpEvent(z))
    acc.compose(dp_event.SelfComposedDpEvent(event, steps))
    return acc.get_epsilon(delta)


def test_poisson_calibration_meets_target_tightly():
    scheme = make_scheme("poisson", 5000, 200, batch_size=50)
    z = calibrate_noise_multiplier(scheme, 2.0, 1e-5)
    assert rdp_poisson(0.01, z, 200, 1e-5) <= 2.0
    assert rdp_poisson(0.01, z / 1.001, 200, 1e-5) > 2.0  # at most rel_tol = 0.1% more noise than needed


def test_fixed_batch_calibration_uses_replace_one_without_replacement():
    scheme = make_scheme("fixed", 2000, 100, batch_size=40)
    assert scheme.neighbours == "replace-one"
    z = calibrate_noise_multiplier(scheme, 3.0, 1e-5)
    assert rdp_fixed(2000, 40, z, 100, 1e-5) <= 3.0


def test_pld_is_at_least_as_tight_as_rdp():
    scheme = make_scheme("poisson", 5000, 200, batch_size=50)
    pld = pld_privacy_accountant.PLDAccountant(neighboring_relation=Rel.ADD_OR_REMOVE_ONE)
    pld.compose(scheme.event(1.2))
    assert pld.get_epsilon(1e-5) == pytest.approx(accountant_epsilon(scheme, 1.2, 1e-5, "pld"))
    assert accountant_epsilon(scheme, 1.2, 1e-5, "pld") <= accountant_epsilon(scheme, 1.2, 1e-5, "rdp")
    with pytest.raises(ValueError, match="Poisson"):
        accountant_epsilon(make_scheme("fixed", 100, 5, batch_size=5), 1.0, 1e-5, "pld")


def test_paper_recipe_by_hand_at_the_papers_setting():
    """Park et al. Fig. 1: eps_tot = 1, delta_tot = 1e-4, S = 10 of D = 400,000, 160,000 documents seen."""
    eps, delta, nu, J = 1.0, 1e-4, 10 / 400_000, 16_000
    rho = (math.sqrt(math.log(1 / delta) + eps) - math.sqrt(math.log(1 / delta))) ** 2
    assert rho + 2 * math.sqrt(rho * math.log(1 / delta)) == pytest.approx(eps)
    eps_prime = math.sqrt(4 * rho * math.log(1.25 / (nu * delta)) / J)
    eps_iter = math.log(1 + (math.exp(eps_prime) - 1) / nu)
    z = math.sqrt(2 * math.log(1.25 / delta)) / eps_iter
    assert paper_noise_multiplier(eps, delta, nu, J) == pytest.approx(z)
    out = paper_epsilon(z, nu, J, delta)
    assert out["epsilon"] == pytest.approx(eps)
    assert out["epsilon_iter"] == pytest.approx(eps_iter) and out["epsilon_iter"] > 1  # outside Eq. 3's range


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0, 10.0])
def test_paper_recipe_round_trip(eps):
    z = paper_noise_multiplier(eps, 1e-5, 0.02, 300)
    assert paper_epsilon(z, 0.02, 300, 1e-5)["epsilon"] == pytest.approx(eps)


def test_paper_baselines_by_hand():
    """Park et al. Sec. 4: linear (Dwork & Roth Thm. 3.16) and advanced (Thm. 3.20) composition of the amplified
    steps, computed here from the theorems' formulas with delta split as the library documents."""
    z, nu, J, delta = 2.0, 0.001, 500, 1e-5
    d_iter = delta / (J * nu)  # linear: J delta' = delta, delta' = nu delta_iter
    eps_prime = math.log(1 + nu * (math.exp(math.sqrt(2 * math.log(1.25 / d_iter)) / z) - 1))
    assert paper_baseline_epsilon(z, nu, J, delta, "linear") == pytest.approx(J * eps_prime)
    d_iter = delta / 2 / (J * nu)  # advanced: delta'' = J delta' = delta / 2
    e = math.log(1 + nu * (math.exp(math.sqrt(2 * math.log(1.25 / d_iter)) / z) - 1))
    advanced = J * e * (math.exp(e) - 1) + math.sqrt(2 * J * math.log(2 / delta)) * e
    assert paper_baseline_epsilon(z, nu, J, delta, "advanced") == pytest.approx(advanced)
    assert paper_baseline_epsilon(z, nu, J, delta, "zcdp") == paper_epsilon(z, nu, J, delta)["epsilon"]


@pytest.mark.parametrize("composition", ["zcdp", "advanced", "linear"])
@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_paper_baselines_round_trip(composition, eps):
    z = paper_baseline_noise_multiplier(eps, 1e-4, 10 / 400_000, 16_000, composition)
    assert paper_baseline_epsilon(z, 10 / 400_000, 16_000, 1e-4, composition) == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("batch", [10, 20, 50, 100, 200, 400])
def test_paper_fig1_noise_ordering(batch):
    """The paper's Fig. 1 claim at its setting (eps 1, delta 1e-4, D = 400,000, 160,000 documents seen): zCDP needs
    less noise than advanced composition, which needs less than linear; the correct RDP accountant of the same
    Poisson-sampled steps less than all three."""
    nu, J = batch / 400_000, 160_000 // batch
    zs = [paper_baseline_noise_multiplier(1.0, 1e-4, nu, J, c) for c in ("zcdp", "advanced", "linear")]
    assert zs[0] < zs[1] < zs[2]
    rdp = calibrate_noise_multiplier(make_scheme("poisson", 400_000, J, batch_size=batch), 1.0, 1e-4)
    assert rdp < zs[0]


def test_dpsvi_noise_is_certified_for_the_sampling_it_really_does():
    rng = np.random.default_rng(0)
    X = rng.poisson(0.5, size=(400, 30))
    est = DPStochasticVI(3, epsilon=2.0, delta=1e-5, batch_size=40, n_iterations=30, doc_length_cap=20, random_state=0).fit(X)
    q = est.scheme_.sampling_rate
    assert est.sigma_ == pytest.approx(est.noise_multiplier_ * 20)  # add/remove sensitivity N
    assert rdp_poisson(q, est.noise_multiplier_, 30, 1e-5) <= 2.0
    assert est.report_.epsilon <= 2.0 and est.report_.neighbours == "add-remove"
    # the batches really are Poisson: inclusion probability q for every document, Binomial sizes
    sizes, hits = [], np.zeros(400)
    for _ in range(3000):
        b = est._draw_batch(est.scheme_, rng)
        sizes.append(b.size)
        hits[b] += 1
    assert np.mean(sizes) == pytest.approx(40, rel=0.02)
    assert np.var(sizes) == pytest.approx(400 * q * (1 - q), rel=0.15)
    assert np.all(np.abs(hits / 3000 - q) < 5 * math.sqrt(q * (1 - q) / 3000))


def test_fixed_dpsvi_uses_sqrt2_sensitivity_and_exact_batches():
    rng = np.random.default_rng(1)
    X = rng.poisson(0.5, size=(300, 20))
    est = DPStochasticVI(2, epsilon=5.0, batch_size=30, n_iterations=10, doc_length_cap=10, sampling="fixed",
                random_state=0).fit(X)
    assert est.sensitivity_ == pytest.approx(math.sqrt(2) * 10)
    assert est.report_.neighbours == "replace-one"
    assert rdp_fixed(300, 30, est.noise_multiplier_, 10, est.delta) <= 5.0
    assert all(est._draw_batch(est.scheme_, rng).size == 30 for _ in range(20))


def test_scheme_validation():
    with pytest.raises(ValueError, match="exactly one"):
        make_scheme("poisson", 100, 10, batch_size=10, sampling_rate=0.1)
    with pytest.raises(ValueError, match="sampling"):
        make_scheme("bernoulli", 100, 10, batch_size=10)
    with pytest.raises(ValueError, match="batch_size"):
        make_scheme("fixed", 100, 10, batch_size=1000)
