"""Bad input raises ValueError naming the parameter and the allowed range."""

from __future__ import annotations

import pytest

import topicdp.rdp as rdp
from rdp_reference import gaussian_rdp, gaussian_zcdp, rdp_to_delta

CASES = [
    (lambda: rdp.calibrate_gaussian(0.0, 1e-5), "epsilon"),
    (lambda: rdp.calibrate_gaussian(-1.0, 1e-5), "epsilon"),
    (lambda: rdp.calibrate_gaussian(float("inf"), 1e-5), "epsilon"),
    (lambda: rdp.calibrate_gaussian(1.0, 0.0), "delta"),
    (lambda: rdp.calibrate_gaussian(1.0, 1.0), "delta"),
    (lambda: rdp.calibrate_gaussian(1.0, 1.5), "delta"),
    (lambda: rdp.calibrate_gaussian(1.0, 1e-5, sensitivity=-1.0), "sensitivity"),
    (lambda: rdp.calibrate_gaussian(1.0, 1e-5, sensitivity=0.0), "sensitivity"),
    (lambda: rdp.calibrate_gaussian(1.0, 1e-5, count=0), "count"),
    (lambda: rdp.calibrate_gaussian(1.0, 1e-5, method="classic"), "method"),
    (lambda: rdp.calibrate_all(1.0, 2.0), "delta"),
    (lambda: rdp.gaussian_epsilon(0.0, 1e-5), "sigma"),
    (lambda: rdp.gaussian_epsilon(1.0, 0.0), "delta"),
    (lambda: rdp.gaussian_epsilon(1.0, 1e-5, sensitivity=-0.1), "sensitivity"),
    (lambda: rdp.gaussian_epsilon(1.0, 1e-5, count=0), "count"),
    (lambda: rdp.gaussian_epsilon(1.0, 1e-5, method="pld"), "method"),
    (lambda: rdp.gaussian_delta(-1.0, 1.0), "sigma"),
    (lambda: rdp.gaussian_delta(1.0, -1.0), "epsilon"),
    (lambda: gaussian_rdp(0.5, 1.0), "alpha"),
    (lambda: gaussian_rdp(2.0, 0.0), "sigma"),
    (lambda: rdp.laplace_rdp([2.0, float("nan")], 1.0), "alpha"),
    (lambda: rdp.laplace_rdp(2.0, 0.0), "scale"),
    (lambda: rdp.pure_dp_rdp(2.0, 0.0), "epsilon"),
    (lambda: rdp.rdp_to_dp(lambda a: a, 0.0), "delta"),
    (lambda: rdp.rdp_to_dp(lambda a: a, 1e-5, conversion="tight"), "conversion"),
    (lambda: rdp.rdp_to_dp(([0.5, 2.0], [1.0, 2.0]), 1e-5), "orders"),
    (lambda: rdp.rdp_to_dp(([1.5, 2.0], [1.0]), 1e-5), "rdp values"),
    (lambda: rdp_to_delta(lambda a: a, -1.0), "epsilon"),
    (lambda: rdp.zcdp_to_dp(-1.0, 1e-5), "rho"),
    (lambda: rdp.zcdp_to_dp(1.0, 1e-5, conversion="x"), "conversion"),
    (lambda: gaussian_zcdp(0.0), "sigma"),
    (lambda: rdp.gdp_epsilon(-1.0, 1e-5), "mu"),
    (lambda: rdp.topicdp_rdp_level(0.0, 1e-5), "epsilon"),
    (lambda: rdp.PrivacyLedger().add_gaussian("g", 0.0, 1.0), "sigma"),
    (lambda: rdp.PrivacyLedger().add_gaussian("g", 1.0, -1.0), "sensitivity"),
    (lambda: rdp.PrivacyLedger().add_gaussian("g", 1.0, 1.0, count=0), "count"),
    (lambda: rdp.PrivacyLedger().add_gaussian("", 1.0, 1.0), "name"),
    (lambda: rdp.PrivacyLedger().add_laplace("l", -2.0, 1.0), "scale"),
    (lambda: rdp.PrivacyLedger().add_pure("p", 0.0), "epsilon"),
    (lambda: rdp.PrivacyLedger().add_approx("a", 1.0, 1.0), "delta"),
    (lambda: rdp.PrivacyLedger().add_approx("a", -1.0, 0.0), "epsilon"),
    (lambda: rdp.PrivacyLedger().epsilon(0.0), "delta"),
    (lambda: rdp.PrivacyLedger().epsilon(1e-5, method="advanced"), "method"),
]


@pytest.mark.parametrize("call, name", CASES)
def test_bad_input_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_messages_state_the_allowed_range():
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, inf\)"):
        rdp.calibrate_gaussian(0.0, 1e-5)
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\)"):
        rdp.calibrate_gaussian(1.0, 1.0)
    with pytest.raises(ValueError, match=r"count must be an integer in \[1, inf\]"):
        rdp.calibrate_gaussian(1.0, 1e-5, count=0)
    with pytest.raises(ValueError, match="'analytic'"):
        rdp.calibrate_gaussian(1.0, 1e-5, method="x")


def test_wrong_types_raise_type_error():
    with pytest.raises(TypeError, match="count"):
        rdp.calibrate_gaussian(1.0, 1e-5, count=2.5)
    with pytest.raises(TypeError, match="epsilon"):
        rdp.calibrate_gaussian("1", 1e-5)
