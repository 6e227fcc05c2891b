"""Audit setups on topic models (topicdp.audit.setups): fixed seeds, small subsets of the embedded Lee corpus."""

import argparse
import json

import numpy as np
import pytest

from topicdp.audit.cli import SETUPS, add_audit_arguments, main, run_audit
from topicdp.audit.setups import (
    NoiseScaleDistinguisher,
    SpectralRelease,
    topicdp_global_setup,
    topicdp_sampled_setup,
    spectral1_setup,
)

SMALL = ["--corpus", "embedded", "--n-users", "40", "--max-features", "400", "--seed", "0"]


def _args(*argv):
    parser = argparse.ArgumentParser()
    add_audit_arguments(parser)
    return parser.parse_args(list(SMALL) + list(argv))


def test_setups_are_registered():
    assert {"topicdp-global", "topicdp-sampled", "spectral-1", "synthetic-gaussian"} <= set(SETUPS)


@pytest.mark.parametrize("canary", ["typical", "outlier", "long-document"])
def test_topicdp_global_is_not_flagged(canary):
    args = _args("--setup", "topicdp-global", "--canary", canary, "--trials", "3000")
    setup = topicdp_global_setup(args)
    d = setup.details
    assert d["sensitivity_claimed"] == pytest.approx(np.sqrt(10)) and d["covered"]
    assert setup.W_out.shape == setup.W_in.shape == (5, setup.canary.D.X.shape[1])
    for dist in ("projection", "canary-words"):
        args.distinguisher = dist
        result = run_audit(setup, args)
        assert not result.flagged and result.eps_lower <= 1.0


def test_under_noised_global_variant_is_flagged():
    """sigma cut to a third of what this pair's own distance would need: the audit must refute epsilon=1."""
    base = topicdp_global_setup(_args("--canary", "outlier"))
    factor = base.details["distance"] / base.details["sensitivity_claimed"] / 3.0
    args = _args("--canary", "outlier", "--trials", "3000", "--sigma-factor", str(factor))
    setup = topicdp_global_setup(args)
    assert setup.details["true_epsilon_this_pair"] > 3.0
    result = run_audit(setup, args)
    assert result.flagged and result.eps_lower > 1.0
    assert "under-noised" in result.mechanism


def test_topicdp_sampled_outlier_is_outside_the_sampled_sensitivity():
    """Insecure small h (3 pairs) keeps this fast; the outlier's distance dwarfs Delta_s on the Lee subset."""
    args = _args("--setup", "topicdp-sampled", "--canary", "outlier", "--n-pairs", "3", "--trials", "2000")
    setup = topicdp_sampled_setup(args)
    d = setup.details
    assert d["h"] == 3 and d["h_required"] == 49 and "INSECURE" in setup.mechanism
    assert d["distance"] > d["delta_s_out"] and not d["covered"]
    assert isinstance(setup.noise, tuple) or d["sigma_in"] == d["sigma_out"]
    result = run_audit(setup, args)
    assert result.flagged
    # the noise-scale distinguisher scores the variance of the residual
    scores = NoiseScaleDistinguisher(setup.W_out).score(setup.W_out + 0.5 * np.ones((2,) + setup.W_out.shape))
    assert np.allclose(scores, 0.25)


def test_topicdp_sampled_public_reference_shares_sigma():
    args = _args("--canary", "long-document", "--n-pairs", "2", "--distribution", "public")
    d = topicdp_sampled_setup(args).details
    assert d["distribution"] == "public" and d["sigma_in"] == d["sigma_out"] and d["delta_s_in"] == d["delta_s_out"]


def test_spectral1_runs_end_to_end_on_a_tiny_corpus():
    args = _args("--setup", "spectral-1", "--n-users", "60", "--max-features", "300", "--n-topics", "3",
                 "--canary", "outlier", "--trials", "6")
    setup = spectral1_setup(args)
    assert setup.release is not None and setup.details["unit"] == "document"
    assert setup.canary.unit == "user" and setup.canary.D.X.shape[0] == setup.canary.D_prime.X.shape[0]  # replace-one
    W = setup.release(setup.D_in, np.random.default_rng(0))
    assert W.shape == (3, setup.canary.D.X.shape[1]) and np.allclose(W.sum(axis=1), 1.0) and (W >= 0).all()
    assert isinstance(setup.release, SpectralRelease)
    for dist in ("projection", "canary-words"):
        args.distinguisher = dist
        result = run_audit(setup, args)
        assert result.n_trials == 6 and np.isfinite(result.eps_lower) and result.eps_lower >= 0.0
        assert result.distinguisher == dist and result.mechanism.startswith("SpectralDP configuration 1")
        assert 0.0 <= result.fpr <= 1.0 and 0.0 <= result.fnr <= 1.0


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
