"""``topicdp audit``: audit a mechanism on a canary and plot the trade-off curve.

The command is mechanism-agnostic: a *setup factory* ``factory(args) -> AuditSetup`` builds the neighbouring
datasets, the claim and the mechanism; :data:`SETUPS` maps ``--setup`` (alias ``--mechanism``) names to
factories and :func:`register_setup` adds more. The built-in ``synthetic-gaussian`` setup is self-contained:
Gaussian output perturbation of a statistic with a proven sensitivity
(:class:`~topicdp.audit.synthetic.BoundedContributionSum`) on a synthetic corpus. The topic-model setups
``topicdp-global``, ``topicdp-sampled`` and ``spectral-1`` live in :mod:`topicdp.audit.setups`.

Hooks for ``topicdp.cli``: :func:`register` (adds the ``audit`` sub-command), or
:func:`add_audit_arguments` + :func:`run_audit_cli`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .canaries import CANARIES, NEIGHBOURS, CanaryPair, make_canary
from .distinguishers import DISTINGUISHERS
from .bounds import SELECTIONS
from .gaussian import analytic_sigma, gaussian_epsilon
from .noise import DiscreteGaussianNoise, GaussianNoise
from .plot import plot_tradeoff
from .runner import AuditResult, audit_output_perturbation, audit_pipeline
from .setups import add_setup_arguments, register_all
from .synthetic import BoundedContributionSum, synthetic_corpus


@dataclass
class AuditSetup:
    """Everything an audit needs: the claim, the neighbours, and the mechanism.

    Give either ``W_out``, ``W_in`` and ``noise`` (output perturbation: only the noise is re-drawn; ``noise``
    may be a ``(noise_out, noise_in)`` pair when the noise scale depends on the data) or
    ``release``, ``D_out`` and ``D_in`` (the pipeline reruns per trial; ``reference=(f(D), f(D'))`` enables
    the projection distinguisher).
    """

    mechanism: str
    epsilon: float
    delta: float
    canary: CanaryPair | None = None
    W_out: np.ndarray | None = None
    W_in: np.ndarray | None = None
    noise: Callable | None = None
    release: Callable | None = None
    D_out: Any = None
    D_in: Any = None
    reference: tuple | None = None
    details: dict = field(default_factory=dict)


def synthetic_setup(args) -> AuditSetup:
    """Gaussian (or discrete Gaussian) output perturbation of :class:`BoundedContributionSum`.

    sigma is the analytic Gaussian sigma (Balle & Wang 2018, Thm. 8) for the proven sensitivity (1 for
    add-remove, 2 for replace-one), multiplied by ``--sigma-factor`` (< 1 under-noises on purpose).
    """
    corpus = synthetic_corpus(random_state=0)
    neighbours = args.neighbours or "add-remove"
    pair = make_canary(args.canary, corpus, neighbours=neighbours, random_state=1)
    f = BoundedContributionSum(n_rows=5)
    W_out, W_in = f(pair.D), f(pair.D_prime)
    sensitivity = f.sensitivity(neighbours)
    sigma = analytic_sigma(args.epsilon, args.delta, sensitivity)
    used = sigma * args.sigma_factor
    if args.noise == "discrete-gaussian":
        noise = DiscreteGaussianNoise(used, sensitivity)
    else:
        noise = GaussianNoise(used)
    true_eps = gaussian_epsilon(sensitivity / used, args.delta)
    return AuditSetup(
        mechanism=f"synthetic {args.noise} output perturbation",
        epsilon=args.epsilon,
        delta=args.delta,
        canary=pair,
        W_out=W_out,
        W_in=W_in,
        noise=noise,
        details={
            "sigma_calibrated": sigma,
            "sigma_used": used,
            "sigma_factor": args.sigma_factor,
            "sensitivity": sensitivity,
            "true_epsilon_worst_case": true_eps,
            "true_epsilon_this_pair": gaussian_epsilon(float(np.linalg.norm(W_in - W_out)) / used, args.delta),
        },
    )


SETUPS: dict[str, Callable[[Any], AuditSetup]] = {"synthetic-gaussian": synthetic_setup}


def register_setup(name: str, factory: Callable[[Any], AuditSetup]) -> None:
    """Make ``--setup name`` (alias ``--mechanism name``) available (call before building the parser)."""
    SETUPS[name] = factory


register_all(register_setup)  # topicdp-global, topicdp-sampled, spectral-1 (topicdp.audit.setups)


def add_audit_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the audit options to ``parser``."""
    parser.add_argument("--setup", "--mechanism", dest="mechanism", default="synthetic-gaussian", choices=sorted(SETUPS),
                        help="what to audit")
    parser.add_argument("--epsilon", type=float, default=1.0, help="claimed epsilon (default 1)")
    parser.add_argument("--delta", type=float, default=1e-5, help="claimed delta (default 1e-5)")
    parser.add_argument(
        "--sigma-factor", type=float, default=1.0, help="multiply the calibrated sigma (e.g. 0.333 under-noises)"
    )
    parser.add_argument("--trials", type=int, default=20_000, help="releases per dataset (default 20000)")
    parser.add_argument("--canary", default="typical", choices=CANARIES)
    parser.add_argument("--neighbours", default=None, choices=NEIGHBOURS,
                        help="neighbour relation (default: the setup's own; add-remove for synthetic-gaussian)")
    parser.add_argument("--distinguisher", default="projection", choices=DISTINGUISHERS)
    parser.add_argument("--noise", default="gaussian", choices=("gaussian", "discrete-gaussian"),
                        help="noise sampler of the synthetic mechanism")
    parser.add_argument("--confidence", type=float, default=0.95, help="Clopper-Pearson confidence (default 0.95)")
    parser.add_argument("--selection", default="held-out", choices=SELECTIONS,
                        help="threshold selection: held-out (default, exact confidence) or same-sample (exploratory)")
    parser.add_argument("--seed", type=int, default=None, help="audit seed (default: from the OS, recorded)")
    parser.add_argument("--n-jobs", type=int, default=1, help="parallel trials for pipeline mechanisms")
    parser.add_argument("--plot", default=None, metavar="PATH", help="save the trade-off plot here")
    parser.add_argument("--out", default=None, metavar="JSON", help="write the audit result here")
    parser.add_argument("--fail-on-flag", action="store_true", help="exit with status 1 if the claim is refuted")
    add_setup_arguments(parser)


def run_audit(setup: AuditSetup, args) -> AuditResult:
    """Run the audit described by ``setup`` with the options in ``args``."""
    canary = setup.canary
    common = dict(
        n_trials=args.trials,
        distinguisher=args.distinguisher,
        canary_words=None if canary is None else canary.canary_words,
        canary_weights=None if canary is None else canary.canary_weights,
        epsilon=setup.epsilon,
        delta=setup.delta,
        confidence=args.confidence,
        selection=args.selection,
        random_state=args.seed,
        mechanism=setup.mechanism,
        canary=None if canary is None else canary.name,
        details={**setup.details, **({} if canary is None else {"canary_info": canary.to_dict()})},
    )
    if setup.release is not None:
        return audit_pipeline(
            setup.release, setup.D_out, setup.D_in, reference=setup.reference, n_jobs=args.n_jobs, **common
        )
    if setup.W_out is None or setup.W_in is None or setup.noise is None:
        raise ValueError("an AuditSetup needs W_out, W_in and noise, or release, D_out and D_in")
    return audit_output_perturbation(setup.W_out, setup.W_in, setup.noise, **common)


def run_audit_cli(args, setup_factory: Callable[[Any], AuditSetup] | None = None) -> int:
    """Entry point of ``topicdp audit``: build the setup, audit, print, save the plot and JSON."""
    factory = setup_factory or SETUPS[getattr(args, "mechanism", "synthetic-gaussian")]
    result = run_audit(factory(args), args)
    print(result.summary())
    if args.plot:
        plot_tradeoff(result, args.plot)
        print(f"trade-off plot   {args.plot}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(result.to_dict(), fh, indent=2)
        print(f"result           {args.out}")
    return 1 if (args.fail_on_flag and result.flagged) else 0


def register(subparsers) -> None:
    """Add ``audit`` to the ``topicdp`` sub-commands (called by ``topicdp.cli``)."""
    p = subparsers.add_parser("audit", help="empirically lower-bound the epsilon of a mechanism on a canary")
    add_audit_arguments(p)
    p.set_defaults(func=run_audit_cli)


def main(argv=None) -> int:
    """``python -m topicdp.audit``."""
    parser = argparse.ArgumentParser(prog="topicdp audit", description=__doc__.split("\n\n")[0])
    add_audit_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_audit_cli(args)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"topicdp audit: error: {exc}", file=sys.stderr)
        return 2
