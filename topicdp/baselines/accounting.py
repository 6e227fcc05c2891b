"""Privacy accounting for DP stochastic variational inference (Park, Foulds, Chaudhuri & Welling 2016,
*Private Topic Modeling*): the paper's recipe (Eqs. 3, 5, 6) and a correct accountant from dp-accounting.

Each of the T iterations releases the minibatch sum of expected sufficient statistics plus Gaussian
noise of standard deviation ``z * Delta`` (z the noise multiplier, Delta the L2 sensitivity of the sum
for the neighbour relation, :mod:`topicdp.baselines.sensitivity`). The iterates are adaptively composed
(each E-step uses the previous noisy release only).

Correct accounting (the default)
--------------------------------
The sampling scheme and neighbour relation of the accountant are those of the code:

* ``"poisson"``: every document joins a batch independently with probability q; neighbours differ by
  adding or removing one document. Accounted as ``PoissonSampledDpEvent(q, GaussianDpEvent(z))``
  composed T times under ``ADD_OR_REMOVE_ONE`` -- by RDP (Mironov, Talwar & Zhang 2019) or by privacy
  loss distributions (PLD; Koskela et al. 2020, Doroshenko et al. 2022), both from dp-accounting.
* ``"fixed"``: batches of exactly S documents drawn uniformly without replacement; neighbours replace one
  document (the corpus size is public). Accounted as ``SampledWithoutReplacementDpEvent(D, S,
  GaussianDpEvent(z))`` composed T times under ``REPLACE_ONE`` by RDP (Wang, Balle & Kasiviswanathan,
  AISTATS 2019, Thm. 27). dp-accounting's PLD accountant has no such event, so ``"pld"`` needs Poisson.

The paper's recipe (reported side by side, and selectable as a calibration for faithful comparison)
---------------------------------------------------------------------------------------------------
Given the noise multiplier z, sampling ratio nu and T = J iterations:

1. per iteration (Eq. 3, the classical Gaussian mechanism of Dwork & Roth Thm. A.1):
   epsilon_iter = sqrt(2 ln(1.25 / delta_iter)) / z;
2. amplification by subsampling (Eq. 6, Li, Qardaji & Su 2012, Thm. 1):
   epsilon' = ln(1 + nu (e^epsilon_iter - 1)), delta' = nu delta_iter;
3. zCDP composition (Eq. 5 with Bun & Steinke 2016 Prop. 1.3, 1.6, Lemma 1.7): the amplified step is
   treated as a Gaussian mechanism with variance tau = 2 ln(1.25/delta') Delta^2 / epsilon'^2, hence
   rho = J Delta^2 / (2 tau) = J epsilon'^2 / (4 ln(1.25/delta')), and
   epsilon_tot = rho + 2 sqrt(rho ln(1/delta_tot)).

Where the recipe is loose (we implement it as written and flag these in the report):

* Step 3 has no theorem behind it: an (epsilon', delta')-DP mechanism is not rho-zCDP for any rho (the
  subsampled Gaussian is not a Gaussian, and its delta' mass cannot be turned into zCDP); the recipe's
  total delta is delta_tot alone, silently dropping the J delta' of the per-step guarantees.
* Eq. 3 is proven only for epsilon_iter < 1 (Dwork & Roth Thm. A.1); at the paper's own settings
  epsilon_iter is several units (amplification makes large per-step budgets look affordable).
* Eq. 5 leaves delta' free. delta' = delta_tot would give delta_iter = delta_tot / nu > 1 at the paper's
  own setting (S = 10, D = 400,000, delta_tot = 1e-4), so we take delta_iter = delta_tot (delta' =
  nu delta_tot) unless ``delta_iter`` is given.
* Eq. 4's sensitivity N/D is a replace-one claim whose proof drops the second document; see
  :mod:`topicdp.baselines.sensitivity`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import dp_accounting
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

from .._validation import check_delta, check_epsilon, check_int, check_option, check_real
from ..rdp import NoBracketError, calibrate_event, smallest_meeting
from ..rdp.ledger import _quiet_absl

SAMPLINGS = ("poisson", "fixed")
ACCOUNTANTS = ("rdp", "pld", "paper")
_NeighborRel = dp_accounting.NeighboringRelation


@dataclass(frozen=True)
class SamplingScheme:
    """How minibatches are drawn, and hence which neighbour relation the accounting uses.

    Attributes
    ----------
    kind : {"poisson", "fixed"}
    n_docs : int
        D, the corpus size.
    n_iterations : int
        T, the number of noisy releases.
    sampling_rate : float
        q (Poisson) or S / D (fixed); the nu of the paper's Eq. 6.
    batch_size : int or None
        S for fixed-size batches.
    """

    kind: str
    n_docs: int
    n_iterations: int
    sampling_rate: float
    batch_size: int | None = None

    @property
    def neighbours(self) -> str:
        return "add-remove" if self.kind == "poisson" else "replace-one"

    def event(self, noise_multiplier: float) -> dp_event.DpEvent:
        """The dp-accounting event of T sampled Gaussian releases with noise multiplier z."""
        gaussian = dp_event.GaussianDpEvent(noise_multiplier)
        if self.kind == "poisson":
            step = dp_event.PoissonSampledDpEvent(self.sampling_rate, gaussian)
        else:
            step = dp_event.SampledWithoutReplacementDpEvent(self.n_docs, self.batch_size, gaussian)
        return dp_event.SelfComposedDpEvent(step, self.n_iterations)


def make_scheme(kind: str, n_docs: int, n_iterations: int, *, batch_size=None, sampling_rate=None) -> SamplingScheme:
    """Validate and build a :class:`SamplingScheme` from exactly one of batch_size / sampling_rate."""
    check_option(kind, "sampling", SAMPLINGS)
    n_docs = check_int(n_docs, "n_docs", low=2 if kind == "fixed" else 0)  # Poisson: D enters no normaliser
    n_iterations = check_int(n_iterations, "n_iterations", low=1)
    if (batch_size is None) == (sampling_rate is None):
        raise ValueError("give exactly one of batch_size and sampling_rate")
    if batch_size is not None:
        batch_size = check_int(batch_size, "batch_size", low=1, high=n_docs)
        rate = batch_size / n_docs
    else:
        rate = check_real(sampling_rate, "sampling_rate", low=0.0, high=1.0, high_open=False)
        if kind == "fixed":
            batch_size = max(1, round(rate * n_docs))
            rate = batch_size / n_docs
    return SamplingScheme(kind, n_docs, n_iterations, rate, batch_size if kind == "fixed" else None)


def _accountant(method: str, neighbours: str):
    rel = _NeighborRel.ADD_OR_REMOVE_ONE if neighbours == "add-remove" else _NeighborRel.REPLACE_ONE
    if method == "rdp":
        return rdp_privacy_accountant.RdpAccountant(neighboring_relation=rel)
    return pld_privacy_accountant.PLDAccountant(neighboring_relation=rel)


def accountant_epsilon(scheme: SamplingScheme, noise_multiplier: float, delta: float, method: str = "rdp") -> float:
    """epsilon at ``delta`` of T sampled Gaussian releases, by dp-accounting's RDP or PLD accountant."""
    check_option(method, "method", ("rdp", "pld"))
    if method == "pld" and scheme.kind != "poisson":
        raise ValueError("the PLD accountant of dp-accounting supports Poisson sampling only; use method='rdp'")
    acc = _accountant(method, scheme.neighbours)
    with _quiet_absl():
        acc.compose(scheme.event(noise_multiplier))
        return float(acc.get_epsilon(check_delta(delta)))


def _default_delta_iter(delta: float, delta_iter: float | None) -> float:
    return delta if delta_iter is None else check_real(delta_iter, "delta_iter", low=0.0, high=1.0)


def paper_epsilon(noise_multiplier: float, sampling_rate: float, n_iterations: int, delta: float,
                  delta_iter: float | None = None) -> dict:
    """The paper's total epsilon for noise multiplier z (Eqs. 3, 6, 5 in that order; module docstring).

    Returns
    -------
    dict
        ``epsilon`` (epsilon_tot), ``delta`` (delta_tot), and the intermediate ``epsilon_iter``,
        ``delta_iter``, ``epsilon_prime``, ``delta_prime``, ``rho``.
    """
    z = check_real(noise_multiplier, "noise_multiplier", low=0.0)
    nu = check_real(sampling_rate, "sampling_rate", low=0.0, high=1.0, high_open=False)
    d_iter = _default_delta_iter(check_delta(delta), delta_iter)
    eps_iter = math.sqrt(2.0 * math.log(1.25 / d_iter)) / z  # Eq. 3 solved for epsilon_iter
    eps_prime = _amplified(eps_iter, nu)  # Eq. 6
    d_prime = nu * d_iter
    rho = n_iterations * eps_prime**2 / (4.0 * math.log(1.25 / d_prime))  # Eq. 5: J Delta^2 / (2 tau)
    eps_tot = rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))  # Bun & Steinke Prop. 1.3
    return {"epsilon": eps_tot, "delta": delta, "epsilon_iter": eps_iter, "delta_iter": d_iter,
            "epsilon_prime": eps_prime, "delta_prime": d_prime, "rho": rho}


def paper_noise_multiplier(epsilon: float, delta: float, sampling_rate: float, n_iterations: int,
                           delta_iter: float | None = None) -> float:
    """Invert the recipe: the z that the paper's Algorithm 1 uses for a total (epsilon, delta).

    rho solves rho + 2 sqrt(rho ln(1/delta)) = epsilon, i.e. sqrt(rho) = sqrt(ln(1/delta) + epsilon) -
    sqrt(ln(1/delta)); then epsilon' = sqrt(4 rho ln(1.25/delta') / J) (Eq. 5), epsilon_iter =
    ln(1 + (e^epsilon' - 1) / nu) (Eq. 6) and z = sqrt(2 ln(1.25/delta_iter)) / epsilon_iter (Eq. 3).
    """
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    nu = check_real(sampling_rate, "sampling_rate", low=0.0, high=1.0, high_open=False)
    d_iter = _default_delta_iter(delta, delta_iter)
    log_inv = math.log(1.0 / delta)
    rho = (math.sqrt(log_inv + eps) - math.sqrt(log_inv)) ** 2
    eps_prime = math.sqrt(4.0 * rho * math.log(1.25 / (nu * d_iter)) / n_iterations)
    eps_iter = math.log1p(math.expm1(eps_prime) / nu)
    return math.sqrt(2.0 * math.log(1.25 / d_iter)) / eps_iter


#: the compositions of the paper's Fig. 1: its zCDP recipe (Eq. 5) and its two baselines (Sec. 4)
PAPER_COMPOSITIONS = ("zcdp", "advanced", "linear")


def paper_baseline_epsilon(noise_multiplier: float, sampling_rate: float, n_iterations: int, delta: float,
                           composition: str) -> float:
    """Total epsilon of the paper's baselines for noise multiplier z (Park et al. 2016, Sec. 4), at total ``delta``.

    Eq. 3 gives each step's (epsilon_iter, delta_iter), Eq. 6 amplifies it to (epsilon', delta' = nu delta_iter),
    and the J steps compose ``"linear"`` (Dwork & Roth 2014, Thm. 3.16: (J epsilon', J delta')) or ``"advanced"``
    (Thm. 3.20: (J epsilon' (e^epsilon' - 1) + sqrt(2 J ln(1/delta'')) epsilon', delta'' + J delta')). The paper
    leaves the split of delta open; here delta'' = J delta' = delta / 2 (advanced) and J delta' = delta (linear),
    which fixes delta_iter = delta / (2 J nu) or delta / (J nu). ``"zcdp"`` is :func:`paper_epsilon`.
    """
    check_option(composition, "composition", PAPER_COMPOSITIONS)
    if composition == "zcdp":
        return paper_epsilon(noise_multiplier, sampling_rate, n_iterations, delta)["epsilon"]
    z = check_real(noise_multiplier, "noise_multiplier", low=0.0)
    eps_prime = _amplified(math.sqrt(2.0 * math.log(1.25 / _baseline_delta_iter(delta, sampling_rate, n_iterations,
                                                                               composition))) / z, sampling_rate)
    if composition == "linear":
        return n_iterations * eps_prime
    return _advanced(eps_prime, n_iterations, delta / 2.0)


def paper_baseline_noise_multiplier(epsilon: float, delta: float, sampling_rate: float, n_iterations: int,
                                    composition: str) -> float:
    """The z of :func:`paper_baseline_epsilon` for a total (epsilon, delta): its inverse (closed form for
    ``"linear"`` and ``"zcdp"``; for ``"advanced"`` the smallest z whose evaluated
    :func:`paper_baseline_epsilon` is ``<= epsilon``, by :func:`topicdp.rdp.smallest_meeting`)."""
    check_option(composition, "composition", PAPER_COMPOSITIONS)
    eps, delta = check_epsilon(epsilon), check_delta(delta)
    nu = check_real(sampling_rate, "sampling_rate", low=0.0, high=1.0, high_open=False)
    n_iterations = check_int(n_iterations, "n_iterations", low=1)
    if composition == "zcdp":
        return paper_noise_multiplier(eps, delta, nu, n_iterations)
    delta_iter = _baseline_delta_iter(delta, nu, n_iterations, composition)  # validated once, before any search
    # linear: J epsilon' = epsilon, so epsilon' = epsilon / J; Eq. 6 inverted, then Eq. 3 solved for z
    z_linear = math.sqrt(2.0 * math.log(1.25 / delta_iter)) / math.log1p(math.expm1(eps / n_iterations) / nu)
    if composition == "linear":
        return z_linear
    # advanced: the bound is decreasing in z (Eq. 3's epsilon_iter falls, Eq. 6 and Thm. 3.20 are increasing),
    # so z is the package's one search, started from the linear z; the evaluated total meets epsilon
    # (the cost is paper_baseline_epsilon(z, nu, n_iterations, delta, "advanced") without its validation: the
    # same floating-point operations, so the guarantee holds for that function as evaluated)
    scale = math.sqrt(2.0 * math.log(1.25 / delta_iter))
    return smallest_meeting(lambda z: _advanced(_amplified(scale / z, nu), n_iterations, delta / 2.0), eps,
                            guess=z_linear)


def _amplified(eps_iter: float, nu: float) -> float:
    """Eq. 6, ln(1 + nu (e^x - 1)) written as x + ln(nu + (1 - nu) e^-x) so that large x cannot overflow."""
    return eps_iter + math.log(nu + (1.0 - nu) * math.exp(-eps_iter))


def _advanced(eps_prime: float, n_iterations: int, slack: float) -> float:
    """Dwork & Roth 2014, Thm. 3.20: the epsilon of J-fold adaptive composition of epsilon'-DP steps at slack."""
    return n_iterations * eps_prime * math.expm1(eps_prime) + math.sqrt(2.0 * n_iterations * math.log(1.0 / slack)) * eps_prime


def _baseline_delta_iter(delta: float, nu: float, n_iterations: int, composition: str) -> float:
    share = delta / 2.0 if composition == "advanced" else delta  # the J delta' of the steps
    delta_iter = share / (n_iterations * nu)
    if not 0.0 < delta_iter < 1.0:
        raise ValueError(f"delta={delta:g} gives delta_iter={delta_iter:g} outside (0, 1) for {n_iterations} steps at "
                         f"sampling rate {nu:g}")
    return delta_iter


def calibrate_noise_multiplier(scheme: SamplingScheme, epsilon: float, delta: float, method: str = "rdp",
                               *, delta_iter: float | None = None, rel_tol: float = 1e-3) -> float:
    """Smallest noise multiplier z (to ``rel_tol``) whose total epsilon is <= ``epsilon`` at ``delta``.

    ``method="rdp"``/``"pld"``: :func:`topicdp.rdp.calibrate_event`, dp-accounting's calibration in shape
    (a fresh accountant of the scheme's neighbour relation per evaluation, the scheme's event of z) run by
    the package's one search (:func:`topicdp.rdp.smallest_meeting`: a multiplicative bracket, Brent's
    method, upward rounding until the accountant's epsilon meets the target). The bracket starts at the
    paper's closed-form z (cheap, and within a factor of a few: evaluating the accountant at tiny z is
    slow; the accountants are tighter than the recipe, about 0.5x) and never evaluates z = 0.
    ``accountant_epsilon(scheme, z, delta) <= epsilon`` holds for the returned z itself, as evaluated, and z
    exceeds the smallest such value by at most about ``rel_tol / 10`` (relative resolution ``rel_tol / 20``;
    see :func:`topicdp.rdp.smallest_meeting`). ``method="paper"``: the closed form
    :func:`paper_noise_multiplier`.
    """
    check_option(method, "method", ACCOUNTANTS)
    eps, delta = check_epsilon(epsilon), check_delta(delta)
    guess = paper_noise_multiplier(eps, delta, scheme.sampling_rate, scheme.n_iterations, delta_iter)
    if method == "paper":
        return guess
    if method == "pld" and scheme.kind != "poisson":
        raise ValueError("the PLD accountant of dp-accounting supports Poisson sampling only; use method='rdp'")
    rtol = 0.05 * check_real(rel_tol, "rel_tol", low=0.0, high=1.0)
    try:
        with _quiet_absl():
            return calibrate_event(lambda: _accountant(method, scheme.neighbours), scheme.event, eps, delta,
                                   guess=guess, rtol=rtol)
    except NoBracketError as err:
        raise ValueError(f"epsilon={eps:g} at delta={delta:g} is met with a noise multiplier 2**30 times below "
                         f"the paper's ({guess:g}): the scheme has (almost) no privacy cost") from err
