"""The privacy report every release carries (see DESIGN.md, "Privacy semantics").

A :class:`PrivacyReport` states exactly what was guaranteed: the kind of guarantee (``approx-DP`` or
``random-DP``), the unit of privacy and the neighbour relation, (epsilon, delta) and, for random DP,
gamma and the sampling distribution P; the sensitivity and how it was obtained; the noise scale and the
calibration that produced it (and what the other calibrations would have given); the composition of
all releases; and the run-time checks of assumptions and preconditions. It round-trips through JSON.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

GUARANTEES = ("approx-DP", "random-DP", "none")
UNITS = ("document", "user")
NEIGHBOURS = ("replace-one", "add-remove")

#: gamma of random DP (Rubinstein & Alda 2017; Wang et al. 2022, TopicDP, Def. 4 and Thm. 1) is a
#: probability over two draws together: the sensitivity sample *and* the neighbouring pair (D, D') from P.
#: It is not a property of the sensitivity sample alone, and it says nothing about pairs P does not draw.
RANDOM_DP_CAVEAT = (
    "This is (epsilon, delta, gamma)-random DP with respect to the sampling distribution P, not "
    "differential privacy: the (epsilon, delta) bound may fail with probability up to gamma, jointly over "
    "the draw of the sensitivity sample and of the neighbouring pair (D, D') from P, and it speaks only of "
    "neighbouring datasets drawn from P. Users unlike those P draws (for example a user whose words no one "
    "else uses) are not covered."
)


@dataclass
class Check:
    """One assumption or precondition checked at run time."""

    name: str
    passed: bool
    detail: str = ""


@dataclass
class PrivacyReport:
    """What a release guarantees, and how that was established.

    Attributes
    ----------
    mechanism : str
        E.g. ``"gaussian-output-perturbation"``, ``"laplace-output-perturbation"``, ``"spectral-config-1"``.
    guarantee : {"approx-DP", "random-DP", "none"}
        ``random-DP`` whenever the sensitivity was sampled rather than proven; ``none`` for a release whose
        stated guarantee does not hold (e.g. fewer sensitivity pairs than Theorem 1 requires).
    unit : {"document", "user"}
        Whose contribution is protected.
    neighbours : {"replace-one", "add-remove"}
        The neighbour relation the guarantee is stated for.
    epsilon, delta : float
        Total privacy parameters of the release (after composition).
    gamma : float or None
        Failure probability of random DP, jointly over the sensitivity sample and the neighbouring pair
        drawn from P (random DP only).
    sampling_distribution : dict or None
        The distribution P of neighbouring pairs (random DP only).
    sensitivity : float or None
        The L2 (Gaussian) or L1 (Laplace) sensitivity used for calibration; for multi-release mechanisms,
        see ``composition``.
    sensitivity_method : str
        How the sensitivity was obtained (``"sampled"``, ``"global bound"``, ``"local bound (Procedure 1)"``...).
    sigma : float or None
        Noise scale of a single-release mechanism (Gaussian std or Laplace scale).
    calibration : str
        The calibration method used (``"analytic"``, ``"rdp"``, ``"paper"``, ``"laplace"``...).
    sigma_alternatives : dict
        The sigma each other calibration method would have given.
    composition : list of dict
        Every release that makes up this one (name, sigma, sensitivity, eps, delta...).
    composition_total : dict
        The total by each accounting method (e.g. ``{"simple": {...}, "rdp": {...}}``).
    checks : list of Check
        Assumptions and preconditions checked at run time.
    seeded : bool
        True when the caller fixed the noise seed (such a release must not be published as private).
    notes : list of str
        Plain-language statements of what the guarantee does and does not cover.
    details : dict
        Mechanism-specific extras (timings, per-pair sensitivities summary, budget split...).
    """

    mechanism: str
    guarantee: str
    unit: str
    neighbours: str
    epsilon: float
    delta: float
    gamma: float | None = None
    sampling_distribution: dict | None = None
    sensitivity: float | None = None
    sensitivity_method: str = ""
    sigma: float | None = None
    calibration: str = ""
    sigma_alternatives: dict = field(default_factory=dict)
    composition: list = field(default_factory=list)
    composition_total: dict = field(default_factory=dict)
    checks: list = field(default_factory=list)
    seeded: bool = False
    notes: list = field(default_factory=list)
    details: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.guarantee not in GUARANTEES:
            raise ValueError(f"guarantee must be one of {GUARANTEES}, got {self.guarantee!r}")
        if self.unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {self.unit!r}")
        if self.neighbours not in NEIGHBOURS:
            raise ValueError(f"neighbours must be one of {NEIGHBOURS}, got {self.neighbours!r}")
        self.checks = [c if isinstance(c, Check) else Check(**c) for c in self.checks]
        if self.guarantee == "random-DP" and RANDOM_DP_CAVEAT not in self.notes:
            self.notes.insert(0, RANDOM_DP_CAVEAT)

    # -- serialisation -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return _jsonable(asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PrivacyReport":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown PrivacyReport fields: {sorted(unknown)}")
        return cls(**data)

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **{"indent": 2, **kwargs})

    @classmethod
    def from_json(cls, text: str) -> "PrivacyReport":
        return cls.from_dict(json.loads(text))

    # -- display -------------------------------------------------------------------------------------
    def summary(self) -> str:
        """A readable multi-line account of the guarantee."""
        lines = [
            f"mechanism            {self.mechanism}",
            f"guarantee            {self.guarantee}",
            f"unit of privacy      {self.unit} ({self.neighbours} neighbours)",
            f"epsilon, delta       {self.epsilon:.6g}, {self.delta:.3g}",
        ]
        if self.gamma is not None:
            lines.append(f"gamma                {self.gamma:.3g}")
        if self.sampling_distribution:
            lines.append(f"sampling dist. P     {self.sampling_distribution.get('kind', self.sampling_distribution)}")
        if self.sensitivity is not None:
            lines.append(f"sensitivity          {self.sensitivity:.6g} ({self.sensitivity_method})")
        if self.sigma is not None:
            lines.append(f"sigma                {self.sigma:.6g} (calibration: {self.calibration})")
        for method, s in self.sigma_alternatives.items():
            lines.append(f"  sigma if {method:<10} {s:.6g}" if s is not None else f"  sigma if {method:<10} n/a")
        if self.composition_total:
            lines.append(f"composition          {len(self.composition)} release(s); totals:")
        for name, total in self.composition_total.items():
            value = f"{total:.6g}" if isinstance(total, (int, float)) else str(total)
            lines.append(f"  {name}: {value}")
        failed = [c for c in self.checks if not c.passed]
        lines.append(f"run-time checks      {len(self.checks) - len(failed)}/{len(self.checks)} passed")
        for c in failed:
            lines.append(f"  FAILED {c.name}: {c.detail}")
        if self.seeded:
            lines.append("seeded               yes: the noise is reproducible; do not publish this release")
        for note in self.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)


def _jsonable(obj):
    """Recursively turn numpy scalars/arrays and non-finite floats into JSON-safe values."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "tolist"):
        return _jsonable(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    return obj
