"""The auditor flags under-noised mechanisms and passes correct ones (fixed seeds, small sizes)."""

import json
from dataclasses import dataclass

import numpy as np
import pytest

from topicdp.audit import (
    AuditResult,
    CanaryWordDistinguisher,
    DiscreteGaussianNoise,
    GaussianNoise,
    analytic_sigma,
    audit_output_perturbation,
    audit_pipeline,
    make_canary,
    per_draw,
)
from topicdp._validation import check_real
from topicdp.audit.canaries import BoundedContributionSum, synthetic_corpus

EPS, DELTA = 1.0, 1e-5
CLAIM = dict(epsilon=EPS, delta=DELTA)
F = BoundedContributionSum(n_rows=5)
SIGMA = analytic_sigma(EPS, DELTA, 1.0)  # proven sensitivity 1 under add-remove


@dataclass
class LaplaceNoise:
    """``W + Laplace(0, scale)`` i.i.d. per entry."""

    scale: float
    name: str = "laplace"

    def __post_init__(self) -> None:
        self.scale = check_real(self.scale, "scale", low=0.0)

    def __call__(self, W: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        return W + rng.laplace(0.0, self.scale, size=(n,) + W.shape)


@pytest.fixture(scope="module")
def pairs():
    corpus = synthetic_corpus(random_state=0)
    out = {}
    for kind in ("typical", "outlier", "long-document"):
        pair = make_canary(kind, corpus, random_state=1)
        out[kind] = (pair, F(pair.D), F(pair.D_prime))
    return out


@pytest.mark.parametrize("canary", ["typical", "outlier", "long-document"])
def test_flags_gaussian_with_a_third_of_the_noise(pairs, canary):
    pair, W_out, W_in = pairs[canary]
    # the true epsilon of these pairs is about 3.4; the held-out bound reaches 1.3-1.7 with 2 x 10^4 trials
    res = audit_output_perturbation(W_out, W_in, SIGMA / 3, n_trials=20_000, **CLAIM, random_state=0, canary=canary)
    assert res.flagged and res.eps_lower > EPS


@pytest.mark.parametrize("canary", ["typical", "outlier", "long-document"])
def test_does_not_flag_the_calibrated_gaussian(pairs, canary):
    pair, W_out, W_in = pairs[canary]
    res = audit_output_perturbation(W_out, W_in, SIGMA, n_trials=5000, epsilon=EPS, delta=DELTA, random_state=0)
    assert not res.flagged and res.eps_lower <= EPS


def test_canary_word_distinguisher_needs_no_f(pairs):
    pair, W_out, W_in = pairs["outlier"]
    kw = dict(n_trials=20_000, distinguisher="canary-words", canary_words=pair.canary_words, **CLAIM, random_state=0)
    assert audit_output_perturbation(W_out, W_in, SIGMA / 3, **kw).flagged
    assert not audit_output_perturbation(W_out, W_in, SIGMA, **kw).flagged


def _one_coordinate_pair(shape=(4, 25)):
    W_out = np.zeros(shape)
    W_in = W_out.copy()
    W_in[1, 3] = 1.0  # sensitivity exactly 1
    return W_out, W_in


def test_secure_discrete_gaussian_noise_is_audited_like_the_gaussian():
    W_out, W_in = _one_coordinate_pair()
    kw = dict(n_trials=4000, epsilon=EPS, delta=DELTA, random_state=2)
    assert not audit_output_perturbation(W_out, W_in, DiscreteGaussianNoise(SIGMA, 1.0), **kw).flagged
    assert audit_output_perturbation(W_out, W_in, DiscreteGaussianNoise(SIGMA / 3, 1.0), **kw).flagged


def test_laplace_noise_pure_dp():
    W_out, W_in = _one_coordinate_pair()  # L1 sensitivity 1: scale 1/eps gives eps-DP (delta = 0)
    kw = dict(n_trials=20_000, epsilon=EPS, delta=0.0, random_state=3)
    assert not audit_output_perturbation(W_out, W_in, LaplaceNoise(1.0 / EPS), **kw).flagged
    assert audit_output_perturbation(W_out, W_in, LaplaceNoise(1.0 / (3 * EPS)), **kw).flagged


def test_results_are_reproducible_and_batching_does_not_matter():
    W_out, W_in = _one_coordinate_pair()
    a = audit_output_perturbation(W_out, W_in, 1.0, n_trials=3000, delta=DELTA, random_state=5, batch_size=7)
    b = audit_output_perturbation(W_out, W_in, 1.0, n_trials=3000, delta=DELTA, random_state=5)
    assert a.eps_lower == b.eps_lower and a.details["seed_entropy"] == "5"
    assert a.epsilon is None and not a.flagged


def test_data_dependent_noise_per_side():
    W_out, W_in = _one_coordinate_pair()
    # sigma computed from each dataset (as with a sampled sensitivity): too little noise on D' only
    kw = dict(n_trials=3000, **CLAIM, random_state=0)
    assert audit_output_perturbation(W_out, W_in, (SIGMA, SIGMA / 4), **kw).flagged
    same = audit_output_perturbation(W_out, W_in, (SIGMA, SIGMA), **kw)
    assert same.eps_lower == audit_output_perturbation(W_out, W_in, SIGMA, **kw).eps_lower


def test_per_draw_wraps_a_single_release_callable():
    W_out, W_in = _one_coordinate_pair()
    noise = per_draw(lambda W, rng: W + 0.2 * rng.standard_normal(W.shape), name="loop")
    res = audit_output_perturbation(W_out, W_in, noise, n_trials=300, epsilon=EPS, delta=DELTA, random_state=0)
    assert res.mechanism == "loop" and res.flagged  # sigma 0.2 is far below the calibrated 3.7


def test_result_serialises_to_json(pairs):
    pair, W_out, W_in = pairs["typical"]
    res = audit_output_perturbation(W_out, W_in, GaussianNoise(SIGMA), n_trials=500, **CLAIM, random_state=0)
    d = json.loads(json.dumps(res.to_dict()))
    assert d["flagged"] is False and d["n_trials"] == 500 and d["distinguisher"] == "projection"
    assert len(d["curve_fpr"]) == len(d["curve_fnr"]) > 0
    assert isinstance(res, AuditResult) and "eps_lower" in res.summary()


# -- full-pipeline audits ----------------------------------------------------------------------------
def noisy_release(data, rng, sigma=SIGMA / 10):
    """A 'pipeline' that recomputes f on every trial (module level: picklable for joblib)."""
    W = F(data)
    return W + sigma * rng.standard_normal(W.shape)


def test_pipeline_audit_flags_and_does_not_depend_on_n_jobs(pairs):
    pair, W_out, W_in = pairs["outlier"]
    kw = dict(n_trials=150, epsilon=EPS, delta=DELTA, random_state=0, canary="outlier")
    words = CanaryWordDistinguisher(pair.canary_words)
    one = audit_pipeline(noisy_release, pair.D, pair.D_prime, distinguisher=words, n_jobs=1, **kw)
    two = audit_pipeline(noisy_release, pair.D, pair.D_prime, distinguisher=words, n_jobs=2, **kw)
    assert one.flagged and one.eps_lower == two.eps_lower
    proj = audit_pipeline(
        noisy_release, pair.D, pair.D_prime, distinguisher="projection", reference=(W_out, W_in), **kw
    )
    assert proj.flagged and proj.mechanism == "pipeline"


def test_input_errors(pairs):
    W_out, W_in = _one_coordinate_pair()
    with pytest.raises(ValueError, match="same shape"):
        audit_output_perturbation(W_out, W_in[:, :3], 1.0, n_trials=10)
    with pytest.raises(ValueError, match="nothing to audit"):
        audit_output_perturbation(W_out, W_out, 1.0, n_trials=10)
    with pytest.raises(ValueError, match="canary_words"):
        audit_output_perturbation(W_out, W_in, 1.0, n_trials=10, distinguisher="canary-words")
    with pytest.raises(ValueError, match="distinguisher"):
        audit_output_perturbation(W_out, W_in, 1.0, n_trials=10, distinguisher="oracle")
    with pytest.raises(ValueError, match="n_trials"):
        audit_output_perturbation(W_out, W_in, 1.0, n_trials=0)
    with pytest.raises(ValueError, match="sigma"):
        audit_output_perturbation(W_out, W_in, -1.0, n_trials=10)
    with pytest.raises(ValueError, match="must return shape"):
        audit_output_perturbation(W_out, W_in, lambda W, rng, n: W, n_trials=10)
    with pytest.raises(ValueError, match="reference|W_out"):
        audit_pipeline(noisy_release, None, None, distinguisher="projection", n_trials=10)
    with pytest.raises(ValueError, match="largest canary word"):
        audit_output_perturbation(W_out, W_in, 1.0, n_trials=10, distinguisher=CanaryWordDistinguisher([999]))
