"""The audit command (synthetic setup), its hooks for ``topicdp audit``, and the trade-off plot."""

import argparse
import json

import numpy as np

from topicdp.audit import audit_output_perturbation, plot_tradeoff
from topicdp.audit import AuditOptions, AuditSetup, SetupOptions
from topicdp.audit.cli import DESCRIPTION, add_audit_arguments, main, options_from_args, populate, run_audit_cli
from topicdp.audit.canaries import BoundedContributionSum, synthetic_corpus

FAST = ["--trials", "2000", "--seed", "0"]


def test_under_noised_synthetic_mechanism_is_flagged_with_plot_and_json(tmp_path, capsys):
    plot, out = tmp_path / "tradeoff.png", tmp_path / "audit.json"
    code = main(FAST + ["--trials", "20000", "--sigma-factor", "0.3333", "--canary", "outlier", "--plot", str(plot),
                        "--out", str(out)])
    assert code == 0
    result = json.loads(out.read_text())
    assert result["flagged"] is True and result["eps_lower"] > result["epsilon"] == 1.0
    assert result["details"]["canary_info"]["canary"] == "outlier"
    assert plot.stat().st_size > 10_000
    assert "FLAGGED" in capsys.readouterr().out


def test_calibrated_synthetic_mechanism_passes_and_fail_on_flag(tmp_path):
    out = tmp_path / "a.json"
    assert main(FAST + ["--canary", "long-document", "--distinguisher", "canary-words", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["flagged"] is False
    assert main(FAST + ["--trials", "20000", "--sigma-factor", "0.3333", "--fail-on-flag"]) == 1


def test_discrete_gaussian_replace_one():
    assert main(["--trials", "500", "--seed", "1", "--noise", "discrete-gaussian", "--neighbours", "replace-one"]) == 0


def register(subparsers) -> None:
    """Add ``audit`` to a parent parser's sub-commands (moved here from topicdp.audit.cli: only this test used it)."""
    populate(subparsers.add_parser("audit", help=DESCRIPTION[0].lower() + DESCRIPTION[1:-1]))


def test_register_hooks_into_a_parent_parser():
    parser = argparse.ArgumentParser(prog="topicdp")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["audit", "--trials", "10", "--canary", "typical"])
    assert args.func is run_audit_cli and args.n_trials == 10 and args.sigma_factor == 1.0


def test_flags_take_their_defaults_from_the_option_dataclasses():
    parser = argparse.ArgumentParser()
    add_audit_arguments(parser)
    setup_options, audit_options = options_from_args(parser.parse_args([]))
    assert setup_options == SetupOptions() and audit_options == AuditOptions()
    assert audit_options.selection == "held-out"
    changed, run = options_from_args(parser.parse_args(["--n-pairs", "4", "--trials", "7", "--n-jobs", "2"]))
    assert changed.n_pairs == 4 and run.n_trials == 7 and changed.n_jobs == run.n_jobs == 2


def test_the_library_imports_without_the_command_line():
    """No circle: the setups and the runner never import the argparse edge."""
    import subprocess
    import sys

    code = ("import sys, topicdp.audit, topicdp.audit.setups; "
            "assert 'topicdp.audit.cli' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def _release(data, rng):
    W = BoundedContributionSum(n_rows=5)(data)
    return W + 0.1 * rng.standard_normal(W.shape)


def test_custom_setup_factory_with_a_pipeline(tmp_path):
    from topicdp.audit import make_canary

    parser = argparse.ArgumentParser()
    add_audit_arguments(parser)
    out = str(tmp_path / "p.json")
    args = parser.parse_args(["--trials", "60", "--seed", "0", "--distinguisher", "canary-words", "--out", out])
    pair = make_canary("outlier", synthetic_corpus(random_state=0), random_state=0)

    def factory(a):
        return AuditSetup(
            mechanism="toy pipeline", epsilon=1.0, delta=1e-5, canary=pair,
            release=_release, D_out=pair.D, D_in=pair.D_prime,
        )

    assert run_audit_cli(args, setup_factory=factory) == 0
    assert json.loads((tmp_path / "p.json").read_text())["mechanism"] == "toy pipeline"


def test_errors_exit_with_status_2(capsys):
    assert main(["--trials", "0"]) == 2
    assert "n_trials" in capsys.readouterr().err
    assert main(["--epsilon", "-1", "--trials", "10"]) == 2


def test_plot_tradeoff_without_claim(tmp_path):
    W_out, W_in = np.zeros((2, 3)), np.eye(2, 3)
    res = audit_output_perturbation(W_out, W_in, 1.0, n_trials=300, random_state=0)
    path = plot_tradeoff(res, tmp_path / "p.svg", title="no claim")
    assert (tmp_path / "p.svg").exists() and path == tmp_path / "p.svg"
