"""Privacy accounting for DP stochastic variational inference (Park, Foulds, Chaudhuri & Welling 2016, "Private
Topic Modeling"): a correct accountant from dp-accounting, and the paper's recipe (Eqs. 3, 5, 6) side by side.

The T noisy releases (``z Delta``, :mod:`.sensitivity`) compose adaptively: ``"poisson"`` sampling (add/remove one
document) is ``PoissonSampledDpEvent(q, GaussianDpEvent(z))`` T times, by RDP (Mironov, Talwar & Zhang 2019) or PLD
(Koskela et al. 2020; Doroshenko et al. 2022); ``"fixed"`` batches (replace one document, D public) are
``SampledWithoutReplacementDpEvent`` by RDP (Wang, Balle & Kasiviswanathan 2019, Thm. 27).

The paper's recipe for z, rate nu and J iterations: Eq. 3, ``epsilon_iter = sqrt(2 ln(1.25/delta_iter)) / z``
(Dwork & Roth Thm. A.1); Eq. 6, ``epsilon' = ln(1 + nu (e^epsilon_iter - 1))``, ``delta' = nu delta_iter`` (Li,
Qardaji & Su 2012, Thm. 1); Eq. 5, ``rho = J epsilon'^2 / (4 ln(1.25/delta'))`` and ``epsilon_tot = rho + 2 sqrt(rho
ln(1/delta_tot))`` (Bun & Steinke 2016). Implemented as written and flagged: Eq. 5 has no theorem (an (epsilon',
delta')-DP step is not rho-zCDP, and the J delta' are dropped) and leaves delta' free (delta_iter = delta_tot unless
given); Eq. 3 is proven only for epsilon_iter < 1; Eq. 4's sensitivity drops the second document of a replace-one pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dp_accounting import dp_event

from .._validation import check_delta, check_epsilon, check_int, check_option, check_real
from ..rdp import NoBracketError, calibrate_event
from ..rdp.ledger import _quiet_absl, dp_accountant

SAMPLINGS = ("poisson", "fixed")
ACCOUNTANTS = ("rdp", "pld", "paper")


@dataclass(frozen=True)
class SamplingScheme:
    """How minibatches are drawn (``kind``, hence the neighbour relation) from D documents over T iterations, at rate
    q (S / D, the paper's nu), with S for fixed-size batches."""

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


def accountant_epsilon(scheme: SamplingScheme, noise_multiplier: float, delta: float, method: str = "rdp") -> float:
    """epsilon at ``delta`` of T sampled Gaussian releases, by dp-accounting's RDP or PLD accountant."""
    check_option(method, "method", ("rdp", "pld"))
    if method == "pld" and scheme.kind != "poisson":
        raise ValueError("the PLD accountant of dp-accounting supports Poisson sampling only; use method='rdp'")
    acc = dp_accountant(scheme.neighbours, method)
    with _quiet_absl():
        acc.compose(scheme.event(noise_multiplier))
        return float(acc.get_epsilon(check_delta(delta)))


def _default_delta_iter(delta: float, delta_iter: float | None) -> float:
    return delta if delta_iter is None else check_real(delta_iter, "delta_iter", low=0.0, high=1.0)


def paper_epsilon(noise_multiplier: float, sampling_rate: float, n_iterations: int, delta: float,
                  delta_iter: float | None = None) -> dict:
    """The paper's total epsilon for noise multiplier z (Eqs. 3, 6, 5; module docstring), with the intermediate
    ``epsilon_iter``, ``delta_iter``, ``epsilon_prime``, ``delta_prime`` and ``rho``.
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
    """Invert the recipe: the z of the paper's Algorithm 1 for a total (epsilon, delta).

    ``sqrt(rho) = sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta))``, then ``epsilon' = sqrt(4 rho ln(1.25/delta') /
    J)`` (Eq. 5), ``epsilon_iter = ln(1 + (e^epsilon' - 1) / nu)`` (Eq. 6), ``z = sqrt(2 ln(1.25/delta_iter)) /
    epsilon_iter`` (Eq. 3).
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


def _amplified(eps_iter: float, nu: float) -> float:
    """Eq. 6 as ``x + ln(nu + (1 - nu) e^-x)``, which cannot overflow."""
    return eps_iter + math.log(nu + (1.0 - nu) * math.exp(-eps_iter))


def calibrate_noise_multiplier(scheme: SamplingScheme, epsilon: float, delta: float, method: str = "rdp",
                               *, delta_iter: float | None = None, rel_tol: float = 1e-3) -> float:
    """Smallest noise multiplier z (to ``rel_tol``) whose total epsilon is <= ``epsilon`` at ``delta``: by
    :func:`topicdp.rdp.calibrate_event` from the paper's closed-form z (``"rdp"``, ``"pld"``: the accountant's epsilon
    meets the target for the returned z as evaluated), or :func:`paper_noise_multiplier` (``"paper"``)."""
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
            return calibrate_event(lambda: dp_accountant(scheme.neighbours, method), scheme.event, eps, delta,
                                   guess=guess, rtol=rtol)
    except NoBracketError as err:
        raise ValueError(f"epsilon={eps:g} at delta={delta:g} is met with a noise multiplier 2**30 times below "
                         f"the paper's ({guess:g}): the scheme has (almost) no privacy cost") from err
