"""Audit setups on topic models (topicdp.audit.setups): fixed seeds, small subsets of the embedded Lee corpus."""

import dataclasses
import json

import numpy as np
import pytest

from topicdp.audit import AuditOptions, GaussianNoise, SetupOptions, run_audit
from topicdp.audit.cli import main
from topicdp.rdp import calibrate_gaussian
from topicdp.audit.setups import (
    SETUPS,
    SpectralRelease,
    topicdp_global_setup,
    topicdp_sampled_setup,
    spectral1_setup,
)

# an audit releases neighbouring corpora thousands of times by design: the repeated-release warning
# is expected here (elsewhere it is an error, pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


SMALL = ["--corpus", "embedded", "--n-users", "40", "--max-features", "400", "--seed", "0"]
OPTIONS = SetupOptions(corpus="embedded", n_users=40, max_features=400)


def _options(**changes) -> SetupOptions:
    return dataclasses.replace(OPTIONS, **changes)


def _run(n_trials: int, **changes) -> AuditOptions:
    return AuditOptions(n_trials=n_trials, seed=0, **changes)


def test_setups_are_registered():
    assert {"topicdp-global", "topicdp-sampled", "spectral-1", "synthetic-gaussian"} <= set(SETUPS)


@pytest.mark.parametrize("canary", ["typical", "outlier", "long-document"])
def test_topicdp_global_is_not_flagged(canary):
    setup = topicdp_global_setup(_options(canary=canary))
    d = setup.details
    assert d["sensitivity_claimed"] == pytest.approx(np.sqrt(10)) and d["covered"]
    assert setup.W_out.shape == setup.W_in.shape == (5, setup.canary.D.X.shape[1])
    for dist in ("projection", "canary-words"):
        result = run_audit(setup, _run(3000, distinguisher=dist))
        assert not result.flagged and result.eps_lower <= 1.0


def test_under_noised_global_variant_is_flagged():
    """sigma cut to a third of what this pair's own distance would need: the audit must refute epsilon=1."""
    base = topicdp_global_setup(_options(canary="outlier"))
    factor = base.details["distance"] / base.details["sensitivity_claimed"] / 3.0
    setup = topicdp_global_setup(_options(canary="outlier", sigma_factor=factor))
    assert setup.details["true_epsilon_this_pair"] > 3.0
    result = run_audit(setup, _run(3000))
    assert result.flagged and result.eps_lower > 1.0
    assert "under-noised" in result.mechanism


def test_topicdp_sampled_outlier_is_outside_the_sampled_sensitivity():
    """Insecure small h (3 pairs) keeps this fast; the outlier's distance dwarfs Delta_s on the Lee subset."""
    setup = topicdp_sampled_setup(_options(canary="outlier", n_pairs=3))
    d = setup.details
    assert d["h"] == 3 and d["h_required"] == 49 and "INSECURE" in setup.mechanism
    assert d["distance"] > d["delta_s_out"] and not d["covered"]
    # P resamples the private corpus, so sigma depends on the data: here Delta_s(D) != Delta_s(D'), and each
    # side must run with the sigma calibrated (independently recomputed here) for its own sampled Delta_s
    assert d["delta_s_in"] != d["delta_s_out"] and isinstance(setup.noise, tuple)
    noise_out, noise_in = setup.noise
    assert isinstance(noise_out, GaussianNoise) and isinstance(noise_in, GaussianNoise)
    assert noise_out.sigma == pytest.approx(calibrate_gaussian(1.0, 1e-5, d["delta_s_out"]), rel=1e-9)
    assert noise_in.sigma == pytest.approx(calibrate_gaussian(1.0, 1e-5, d["delta_s_in"]), rel=1e-9)
    result = run_audit(setup, _run(2000))
    assert result.flagged


def test_topicdp_sampled_public_reference_shares_sigma():
    d = topicdp_sampled_setup(_options(canary="long-document", n_pairs=2, distribution="public")).details
    assert d["distribution"] == "public" and d["sigma_in"] == d["sigma_out"] and d["delta_s_in"] == d["delta_s_out"]


def test_spectral1_runs_end_to_end_on_a_tiny_corpus():
    setup = spectral1_setup(_options(n_users=60, max_features=300, n_topics=3, canary="outlier"))
    assert setup.release is not None and setup.details["unit"] == "document"
    assert setup.canary.unit == "user" and setup.canary.D.X.shape[0] == setup.canary.D_prime.X.shape[0]  # replace-one
    W = setup.release(setup.D_in, np.random.default_rng(0))
    assert W.shape == (3, setup.canary.D.X.shape[1]) and np.allclose(W.sum(axis=1), 1.0) and (W >= 0).all()
    assert isinstance(setup.release, SpectralRelease)
    for dist in ("projection", "canary-words"):
        result = run_audit(setup, _run(6, distinguisher=dist))
        assert result.n_trials == 6 and np.isfinite(result.eps_lower) and result.eps_lower >= 0.0
        assert result.distinguisher == dist and result.mechanism.startswith("DPSpectralMoments configuration 1")
        assert 0.0 <= result.bound.fpr <= 1.0 and 0.0 <= result.bound.fnr <= 1.0


def test_cli_topicdp_global(tmp_path, capsys):
    out = tmp_path / "audit.json"
    code = main(SMALL + ["--setup", "topicdp-global", "--canary", "typical", "--trials", "1000",
                         "--distinguisher", "canary-words", "--out", str(out), "--fail-on-flag"])
    assert code == 0
    result = json.loads(out.read_text())
    assert result["mechanism"].startswith("TopicDP global") and result["flagged"] is False
    assert result["details"]["canary_info"]["neighbours"] == "replace-one"
    assert "not flagged" in capsys.readouterr().out


def test_cli_rejects_unsupported_neighbours_and_missing_corpus(capsys):
    assert main(SMALL + ["--setup", "topicdp-sampled", "--neighbours", "add-remove", "--trials", "10"]) == 2
    assert "replace-one" in capsys.readouterr().err
    assert main(["--setup", "topicdp-global", "--corpus", "/nonexistent/corpus.jsonl", "--trials", "10"]) == 2


def test_options_are_validated_on_construction_and_name_the_option():
    with pytest.raises(ValueError, match="n_users"):
        SetupOptions(n_users=2)
    with pytest.raises(ValueError, match="canary"):
        SetupOptions(canary="loud")
    with pytest.raises(ValueError, match="selection"):
        AuditOptions(selection="best")
    with pytest.raises(ValueError, match="n_trials"):
        AuditOptions(n_trials=0)
