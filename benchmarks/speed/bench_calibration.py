"""Time of calibration before and after the one search (:func:`topicdp.rdp.smallest_meeting`), in one process.

The "before" code is read from git at ``--before`` (default 1c6377e, the last commit with the separate
searches) and loaded beside the installed package: ``topicdp/rdp/{_checks,conversions,gaussian,calibration}.py``
as a package of their own, and ``topicdp/spectral/accounting.py`` / ``topicdp/baselines/accounting.py`` with
their relative imports made absolute (they then use today's ``PrivacyLedger``, ``_quiet_absl`` and
validators, which the refactor did not change). Each workload runs before and after alternately (the order
flips every repeat) and the medians are compared; the values are compared too (largest relative difference).

Workloads:

* ``analytic`` and ``rdp``: 1,000 sigmas each, ``calibrate_gaussian`` on a grid of epsilon in [0.1, 10],
  delta in [1e-10, 1e-3], sensitivity in {0.5, 1, sqrt 2}, count in {1, 10} (``"rdp"`` is a closed-form
  order maximisation whose search is only the upward rounding, before and after);
* ``spectral``: the RDP budget split's noise multiplier of configurations 3-4 (Gaussian and Laplace releases)
  at 10 (epsilon, delta) targets (was a fixed 80-step geometric bisection);
* ``baseline``: 200 advanced-composition paper baselines (was a 200-step bisection);
* ``dpsvi`` (``--dpsvi``; seconds per call): DP-SVI's noise multiplier on dp-accounting's RDP accountant, two
  Poisson schemes (was ``calibrate_dp_mechanism``).

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/speed/bench_calibration.py [--repeats 7] [--dpsvi]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[2]


def _git_show(rev: str, path: str) -> str:
    return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def _load_source(name: str, source: str, path: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module  # dataclasses look their module up while the class body runs
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def load_before(rev: str) -> dict:
    """The calibration functions as they were at ``rev``."""
    tmp = Path(tempfile.mkdtemp(prefix="calibration_before_"))
    pkg = tmp / "rdp_before"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name in ("_checks", "conversions", "gaussian", "calibration"):
        (pkg / f"{name}.py").write_text(_git_show(rev, f"topicdp/rdp/{name}.py"))
    spec = importlib.util.spec_from_file_location("rdp_before", pkg / "__init__.py",
                                                  submodule_search_locations=[str(pkg)])
    assert spec is not None and spec.loader is not None
    sys.modules["rdp_before"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules["rdp_before"])
    import rdp_before.calibration as old_calibration  # type: ignore[import-not-found]

    def absolute(source: str, package: str) -> str:
        return source.replace("from ..", "from topicdp.").replace("from .", f"from topicdp.{package}.")

    spectral = _load_source("spectral_accounting_before",
                            absolute(_git_show(rev, "topicdp/spectral/accounting.py"), "spectral"), "spectral_before")
    baselines = _load_source("baselines_accounting_before",
                             absolute(_git_show(rev, "topicdp/baselines/accounting.py"), "baselines"),
                             "baselines_before")
    return {"calibrate_gaussian": old_calibration.calibrate_gaussian, "Budget": spectral.Budget,
            "paper_baseline_noise_multiplier": baselines.paper_baseline_noise_multiplier,
            "calibrate_noise_multiplier": baselines.calibrate_noise_multiplier, "make_scheme": baselines.make_scheme}


def load_after() -> dict:
    sys.path.insert(0, str(ROOT))  # the paper's baselines live beside their benchmark
    from benchmarks.privacy.paper_baselines import paper_baseline_noise_multiplier
    from topicdp.baselines import accounting as baselines
    from topicdp.rdp import calibrate_gaussian
    from topicdp.spectral.accounting import SpectralBudget

    return {"calibrate_gaussian": calibrate_gaussian, "Budget": SpectralBudget,
            "paper_baseline_noise_multiplier": paper_baseline_noise_multiplier,
            "calibrate_noise_multiplier": baselines.calibrate_noise_multiplier, "make_scheme": baselines.make_scheme}


def gaussian_grid(n: int = 1000) -> list:
    """n (epsilon, delta, sensitivity, count) points, deterministic."""
    points = []
    for i in range(n):
        eps = 0.1 * 100.0 ** ((i * 0.6180339887) % 1.0)  # 0.1 .. 10, spread by the golden ratio
        delta = 10.0 ** (-3.0 - 7.0 * ((i * 0.7548776662) % 1.0))  # 1e-3 .. 1e-10
        points.append((eps, delta, (0.5, 1.0, math.sqrt(2.0))[i % 3], (1, 10)[(i // 3) % 2]))
    return points


def workloads(impl: dict, dpsvi: bool) -> dict:
    grid = gaussian_grid()
    splits = {3: {"p1_gap": 0.05, "p1_norm": 0.05, "e7": 0.45, "e8": 0.45},
              4: {"p1_gap": 0.05, "p1_norm": 0.05, "e9": 0.45, "e8": 0.45}}
    targets = [(e, d) for e in (0.3, 1.0, 3.0, 10.0, 30.0) for d in (1e-7, 1e-5)]

    def analytic() -> list:
        return [impl["calibrate_gaussian"](e, d, s, "analytic", c) for e, d, s, c in grid]

    def rdp() -> list:
        return [impl["calibrate_gaussian"](e, d, s, "rdp", c) for e, d, s, c in grid]

    def spectral() -> list:
        out = []
        for split in splits.values():
            gauss = tuple(n for n in split if not n.startswith("p1"))
            lap = tuple(n for n in split if n.startswith("p1"))
            out += [impl["Budget"](e, d, dict(split), gauss, lap, accounting="rdp")._z for e, d in targets]
        return out

    def baseline() -> list:
        return [impl["paper_baseline_noise_multiplier"](0.2 + 0.05 * i, 1e-5, 10 / 400_000, 16_000, "advanced")
                for i in range(200)]

    def svi() -> list:
        return [impl["calibrate_noise_multiplier"](impl["make_scheme"]("poisson", n, t, batch_size=b), 1.0, 1e-5)
                for n, t, b in ((5000, 200, 50), (400_000, 2000, 10))]

    out = {"analytic (1000 sigmas)": analytic, "rdp (1000 sigmas)": rdp, "spectral (20 splits)": spectral, "baseline (200 advanced)": baseline}
    if dpsvi:
        out["dpsvi (2 schemes)"] = svi
    return out


def main(argv: list | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="1c6377e", help="git revision of the code before (default 1c6377e)")
    parser.add_argument("--repeats", type=int, default=15, help="interleaved repeats (DP-SVI: a fifth, at least 3)")
    parser.add_argument("--dpsvi", action="store_true", help="also time DP-SVI's accountant calibration (slow)")
    args = parser.parse_args(argv)
    before, after = workloads(load_before(args.before), args.dpsvi), workloads(load_after(), args.dpsvi)
    print(f"before = {args.before}, after = working tree; OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, "
          f"{args.repeats} interleaved repeats (DP-SVI {max(3, args.repeats // 5)}), medians; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'workload':26s} {'before s':>10s} {'after s':>10s} {'before/after':>13s} {'max rel diff':>13s}")
    for name in before:
        times: dict = {"before": [], "after": []}
        values: dict = {}
        for r in range(max(3, args.repeats // 5) if name.startswith("dpsvi") else args.repeats):
            order = ("before", "after") if r % 2 == 0 else ("after", "before")
            for which in order:
                fn = before[name] if which == "before" else after[name]
                t0 = time.perf_counter()
                values[which] = fn()
                times[which].append(time.perf_counter() - t0)
        tb, ta = statistics.median(times["before"]), statistics.median(times["after"])
        diff = max(abs(a / b - 1.0) for a, b in zip(values["after"], values["before"]))
        print(f"{name:26s} {tb:10.4f} {ta:10.4f} {tb / ta:13.2f} {diff:13.2e}")


if __name__ == "__main__":
    main()
