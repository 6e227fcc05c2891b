"""The privacy report every release carries: a frozen, JSON round-tripping :class:`PrivacyReport` of what was
guaranteed (kind, unit, neighbour relation, epsilon, delta, gamma and P for random DP), how (sensitivity, sigma,
calibration, composition, run-time checks), and the status of every published quantity (:data:`STATUSES`).

Each producer states its step as :class:`ReportParts`; the report is made once by :func:`compose_report` (a
pipeline adds its step with :func:`extend_report`). ``composition_total`` is one list for every road, one
:func:`total` per accounting method; ``valid=False`` marks a total shown for comparison that is not a proven bound.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping, Sequence

GUARANTEES = ("approx-DP", "random-DP", "none")
from ._names import NEIGHBOURS, UNITS  # noqa: E402  (one place for the names)

#: relative tolerance within which two accounts of one release's epsilon agree (:func:`accounts_agree`): float noise
#: of a step calibrated on a released quantity; far above rounding, far below what 4-6 printed digits show.
ACCOUNTS_RTOL = 1e-9


def accounts_agree(a: float, b: float, rtol: float = ACCOUNTS_RTOL) -> bool:
    """Whether two accounts of epsilon agree: within ``rtol`` of the larger; an infinite one only with an infinite."""
    a, b = float(a), float(b)
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return a == b
    return abs(a - b) <= rtol * max(abs(a), abs(b))

#: gamma of random DP (Rubinstein & Alda 2017; Wang et al. 2022, TopicDP, Def. 4 and Thm. 1) is a probability over
#: the sensitivity sample *and* the neighbouring pair (D, D') from P together; it says nothing of pairs P never draws.
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


#: What a published quantity is, under the release's neighbour relation. Every entry of
#: ``PrivacyReport.published`` starts with one of these words, optionally followed by ": why".
STATUSES = (
    "public",            # a parameter the caller or the library chose without looking at the data
    "public (stated)",   # a count computed from the data but declared public by the neighbour relation
    "DP",                # the output of a DP mechanism
    "random-DP",         # the output of a random-DP mechanism: random DP with respect to P, not DP
    "post-processing",   # a function of DP (or random-DP) outputs and public values only
    "NOT COVERED",       # no guarantee covers it (e.g. derived from the private data without noise); the report says why
)

#: The statuses of fields that may differ between neighbouring datasets with the same noise seed; every other
#: published field (NOT COVERED ones too) must be identical on both (the neighbour contract).
NOISED_STATUSES = ("DP", "random-DP", "post-processing")


@dataclass(frozen=True)
class PrivacyReport:
    """What a release guarantees, and how that was established.

    Attributes
    ----------
    mechanism : str
        As ``topicdp privatize --mechanism`` and ``topicdp compare`` spell it (``"topicdp"`` for the sampled road).
    guarantee : {"approx-DP", "random-DP", "none"}
        ``random-DP`` whenever the sensitivity was sampled rather than proven; ``none`` where the stated guarantee
        does not hold (e.g. fewer sensitivity pairs than Theorem 1 requires).
    epsilon, delta : float
        Total privacy parameters of the release (after composition).
    gamma, sampling_distribution : float, dict or None
        Random DP only: the failure probability, jointly over the sensitivity sample and the neighbouring pair
        drawn from P, and P.
    sensitivity, sigma : float or None
        The L2 (Gaussian) or L1 (Laplace) sensitivity, and the noise scale, of a single-release mechanism (else see
        ``composition``); ``sigma_alternatives``: what each other calibration would have given.
    composition_total : list of dict
        The total by each accounting method (:func:`total`); ``valid=False`` marks one that is not a proven bound.
    seeded, details
        The caller fixed the noise seed (not to be published as private); published extras (never exact statistics
        of the private data).
    published : dict
        The status (:data:`STATUSES`) of every published quantity, by its dotted path in
        :meth:`topicdp.private_release.PrivateRelease.to_dict`; a path's status covers what is below it unless a
        longer path says otherwise.
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
    composition_total: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    seeded: bool = False
    notes: list = field(default_factory=list)
    details: dict = field(default_factory=dict)
    published: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, allowed in (("guarantee", GUARANTEES), ("unit", UNITS), ("neighbours", NEIGHBOURS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        # frozen: normalise through object.__setattr__, once, here
        notes = list(self.notes)
        if self.guarantee == "random-DP" and RANDOM_DP_CAVEAT not in notes:
            notes.insert(0, RANDOM_DP_CAVEAT)
        object.__setattr__(self, "notes", notes)
        object.__setattr__(self, "checks", [c if isinstance(c, Check) else Check(**c) for c in self.checks])
        object.__setattr__(self, "composition_total", [_check_total(t) for t in self.composition_total])
        for path, status in self.published.items():
            check_status(status, f"published[{path!r}]")

    def certified_epsilon(self) -> float:
        """The smallest epsilon among the valid totals at this report's delta (inf when there is none)."""
        return min((t["epsilon"] for t in self._valid_totals()), default=math.inf)

    def _valid_totals(self) -> list[dict]:
        """The totals that are proven bounds at this report's delta."""
        return [t for t in self.composition_total if t["valid"] and t["delta"] <= self.delta * (1 + 1e-12)]

    def check_consistent(self) -> None:
        """Refuse (ValueError naming the field) a report whose stated guarantee is not what its composition proves.

        A valid total must be at the stated delta or below, the smallest epsilon among those at most the stated one
        (within :data:`ACCOUNTS_RTOL`; one-sided: a tighter composition is what the headline certifies), and a
        report that states DP has no random-DP total nor output. A guarantee ``"none"`` states nothing to check.
        """
        if self.guarantee == "none":
            return
        if self.guarantee == "approx-DP":
            for path, status in self.published.items():
                if str(status).split(":", 1)[0].strip() == "random-DP":
                    raise ValueError(f"report.published[{path!r}] is random-DP, but report.guarantee states approx-DP "
                                     "(a release with a random-DP output is random DP as a whole); refused")
        epsilon, delta = float(self.epsilon), float(self.delta)
        valid = [t for t in self.composition_total if t["valid"]]
        if not valid:
            return  # nothing proven to compare with: the summary says "no valid account"
        at_delta = self._valid_totals()
        if not at_delta:
            smallest = min(float(t["delta"]) for t in valid)
            raise ValueError(f"report.delta is {delta:.3g}, but every proven total of report.composition_total is at "
                             f"a larger delta (the smallest {smallest:.3g}): the stated guarantee is not the "
                             "composition's; refused")
        certified = self.certified_epsilon()
        if certified > epsilon * (1.0 + ACCOUNTS_RTOL) + 1e-12:  # float noise of a sum of shares (and near 0)
            best = next(t for t in at_delta if t["epsilon"] == certified)
            raise ValueError(f"report.epsilon states {epsilon:.6g}, but the tightest proven total of "
                             f"report.composition_total ({best['accounting']}) is {certified:.6g} at delta "
                             f"{float(best['delta']):.3g}: the stated guarantee is not the composition's; refused")
        if self.guarantee == "approx-DP":
            random = [t["accounting"] for t in valid if (t.get("details") or {}).get("guarantee") == "random-DP"]
            if random:
                raise ValueError(f"report.guarantee states approx-DP, but report.composition_total's {random[0]} "
                                 "total is random DP (it holds with probability 1 - gamma over P's pairs); refused")

    # -- serialisation -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return _jsonable(asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PrivacyReport":
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown PrivacyReport fields: {sorted(unknown)}")
        return cls(**data)

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **{"indent": 2, **kwargs})

    @classmethod
    def from_json(cls, text: str) -> "PrivacyReport":
        return cls.from_dict(json.loads(text))

    # -- display -------------------------------------------------------------------------------------
    def headline(self) -> str:
        """The guarantee certified for this release (:meth:`certified_epsilon`), in one line; the requested epsilon
        follows in brackets when they differ."""
        who = f"each {self.unit}, {self.neighbours} neighbours"
        if self.guarantee == "none":
            return "guarantee            NONE: the stated guarantee does not hold for this release (see the notes)"
        certified = self.certified_epsilon()
        eps = self.epsilon if math.isinf(certified) else certified
        asked = ("certified" if accounts_agree(eps, self.epsilon)
                 else f"certified; requested epsilon {self.epsilon:.4g}")
        if self.guarantee == "random-DP":
            gamma = "" if self.gamma is None else f", gamma {self.gamma:.3g}"
            return (f"guarantee            random DP, NOT DP: ({eps:.4g}, {self.delta:.3g}{gamma})-random DP with "
                    f"respect to the sampling distribution P, for {who} ({asked}); units unlike P's draws are not "
                    "covered")
        kind = f"pure {eps:.4g}-DP" if self.delta == 0 else f"({eps:.4g}, {self.delta:.3g})-DP"
        return f"guarantee            {kind} for {who} ({asked})"

    def summary(self) -> str:
        """A readable account of the guarantee: the certified guarantee first, then how it was established (looser
        accounts last, labelled as such)."""
        ledger = self.details.get("ledger") or {}  # charged to a persisted ledger: the dataset's total so far
        forced = self.released_against_forecast()
        lines = [self.headline(), *([f"forced               {forced}"] if forced else []),
                 *([ledger["line"]] if "line" in ledger else []), f"mechanism            {self.mechanism}"]
        if self.gamma is not None:
            lines.append(f"gamma                {self.gamma:.3g}")
        if self.sampling_distribution:
            P = self.sampling_distribution
            bounds = ", ".join(f"{k}={v}" for k, v in P.get("bounds", {}).items())
            lines.append(f"sampling dist. P     {P.get('kind', P)}" + (f" (records cut to {bounds})" if bounds else ""))
        if self.sensitivity is not None:
            lines.append(f"sensitivity          {self.sensitivity:.6g} ({self.sensitivity_method})")
        if self.sigma is not None:
            lines.append(f"sigma                {self.sigma:.6g}: {self.sigma_meaning()} (calibration: "
                         f"{self.calibration})")
        for method, s in self.sigma_alternatives.items():
            lines.append(f"  sigma if {method:<10} {s:.6g}" if s is not None else f"  sigma if {method:<10} n/a")
        lines += self._account_lines()
        failed = [c for c in self.checks if not c.passed]
        lines.append(f"run-time checks      {len(self.checks) - len(failed)}/{len(self.checks)} passed")
        for c in failed:
            lines.append(f"  FAILED {c.name}: {c.detail}")
        if self.seeded:
            lines.append("seeded               yes: the noise is reproducible; do not publish this release")
        flagged = {k: v.split(":")[0] for k, v in self.published.items() if v.split(":")[0] != "public"}
        if flagged:
            lines.append("published fields that are not public parameters (their status):")
            lines.extend(f"  {k:<34} {v}" for k, v in flagged.items())
        for note in self.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)

    def released_against_forecast(self) -> str | None:
        """The statement a release forced past its plan's refusal carries (``release_anyway=True``), from
        ``details["plan"]["decision"]``, else None; the displays put it under the headline.

        Examples
        --------
        >>> report = PrivacyReport("dp-vem", "approx-DP", "user", "add-remove", 3.0, 1e-6, details={"plan": {
        ...     "decision": {"verdict": "noise", "released_anyway": True, "overlap_with_lda": 0.05}}})
        >>> print(report.released_against_forecast())
        released against the plan's forecast: it forecast noise (overlap with LDA 0.05); the owner forced it (release_anyway)
        """
        decision = (self.details.get("plan") or {}).get("decision") or {}
        if not decision.get("released_anyway"):
            return None
        labels = {"overlap_with_lda": "overlap with LDA", "npmi": "NPMI", "contrast": "contrast",
                  "diversity": "diversity"}
        figures = [f"{label} {float(decision[name]):.3g}" for name, label in labels.items()
                   if isinstance(decision.get(name), (int, float))]
        if isinstance(decision.get("simulated_draws"), int):
            figures.append(f"{decision.get('simulated_readable')} of {decision['simulated_draws']} simulated "
                           "releases readable")
        verdict = decision.get("verdict") or "a refusal"
        return (f"released against the plan's forecast: it forecast {verdict}"
                + (f" ({', '.join(figures)})" if figures else "") + "; the owner forced it (release_anyway)")

    def __repr__(self) -> str:
        """One line: the certified guarantee and the mechanism (``summary()`` has the rest)."""
        forced = "; FORCED against the plan's forecast" if self.released_against_forecast() else ""
        return f"<PrivacyReport: {self.headline().split(maxsplit=1)[1]}; mechanism {self.mechanism}{forced}>"

    def _repr_markdown_(self) -> str:
        """The summary for a notebook that renders Markdown: the headline in bold, the rest as it prints."""
        head, rest = _display_lines(self)
        return "".join(f"**{_markdown_text(line)}**\n\n" for line in head) + "```\n" + "\n".join(rest) + "\n```\n"

    def _repr_html_(self) -> str:
        """The summary for a notebook: static, escaped HTML (:func:`report_html`)."""
        return report_html(self)

    def sigma_meaning(self) -> str:
        """What ``sigma`` is the standard deviation (or Laplace scale) of, for this report's mechanism."""
        return SIGMA_MEANINGS.get(self.mechanism, "the noise scale of each released entry")

    def _account_lines(self) -> list[str]:
        """The account that certifies, then every other total under "looser accounts, for comparison"."""
        if not self.composition_total:
            return []
        certified = self.certified_epsilon()
        # every valid account that agrees with the certified one (within ACCOUNTS_RTOL, not to the last bit)
        used = [t for t in self._valid_totals() if accounts_agree(t["epsilon"], certified)]
        names = " = ".join(t["accounting"] for t in used) or "no valid account"
        lines = [f"composition          {len(self.composition)} release(s), certified by {names}"]
        others = [t for t in self.composition_total if not any(t is u for u in used)]
        if others:
            lines.append("looser accounts, for comparison (not used):")
        for t in others:
            flag = "" if t["valid"] else "  (NOT a proven bound)"
            lines.append(f"  {t['accounting']:<22} epsilon {float(t['epsilon']):.6g} at delta {t['delta']:.3g}{flag}")
        return lines


#: what ``PrivacyReport.sigma`` is the standard deviation (Laplace: scale) of, by mechanism
SIGMA_MEANINGS = {
    "dp-vem": "std of the Gaussian noise on each entry of the K x V statistics summed over units, each iteration",
    "gaussian-global": "std of the Gaussian noise on each entry of the K x V topic-word matrix",
    "topicdp": "std of the Gaussian noise on each entry of the K x V topic-word matrix",
    "laplace": "Laplace scale b of the noise on each entry of the K x V topic-word matrix",
    "dpsvi": "std of the Gaussian noise on each entry of a minibatch's K x V statistics",
}


def report_html(report: PrivacyReport, *, with_summary: bool = True) -> str:
    """A report as a block of static HTML: its headline (and a forced release's statement, in red) first, then
    the rest of :meth:`PrivacyReport.summary` when ``with_summary`` (folded under "how it was established")."""
    head, rest = _display_lines(report)
    parts = ['<div class="topicdp-report" style="font-family:system-ui,sans-serif;line-height:1.35">',
             f'<div class="topicdp-headline" style="font-weight:600">{html.escape(head[0])}</div>']
    if len(head) > 1:
        parts.append(f'<div class="topicdp-forced" style="color:#a01010;font-weight:600">{html.escape(head[1])}'
                     "</div>")
    if with_summary:
        parts.append('<details open><summary>how it was established</summary><pre style="white-space:pre-wrap;'
                     f'margin:4px 0">{html.escape(chr(10).join(rest))}</pre></details>')
    parts.append("</div>")
    return "".join(parts)


def _display_lines(report: PrivacyReport) -> tuple[list[str], list[str]]:
    """(the headline and a forced release's statement, the summary's other lines) of a display."""
    lines = report.summary().splitlines()
    forced = report.released_against_forecast()
    head = ["guarantee: " + lines[0].split(maxsplit=1)[1], *([forced] if forced else [])]
    return head, [line for line in lines[1:] if not (forced and line.endswith(forced))]


def _markdown_text(text: str) -> str:
    """``text`` with Markdown's emphasis and link characters escaped."""
    for char in "\\`*_[]<>#|":
        text = text.replace(char, "\\" + char)
    return text


def check_status(status: str, name: str = "status") -> str:
    """``status`` must start with one of :data:`STATUSES` (optionally followed by ``": why"``)."""
    head = str(status).split(":", 1)[0].strip()
    if head not in STATUSES:
        raise ValueError(f"{name} must start with one of {STATUSES}, got {status!r}")
    return status


def total(accounting: str, epsilon: float, delta: float, *, valid: bool = True, **details) -> dict:
    """One entry of ``composition_total``: the total (epsilon, delta) by one accounting method."""
    return {"accounting": str(accounting), "epsilon": float(epsilon), "delta": float(delta), "valid": bool(valid),
            "details": _jsonable(details)}


def ledger_totals(ledger, delta: float) -> list[dict]:
    """``composition_total`` of a :class:`topicdp.rdp.PrivacyLedger` at total ``delta``: every entry composed.

    With random-DP entries the totals hold with probability at least ``1 - gamma`` over the pair drawn from P
    (``gamma`` the sum of the entries', a union bound), and ``details`` says so: never a DP total.
    """
    if any(e.gamma is not None for e in ledger.records):
        details = {"guarantee": "random-DP", "gamma": ledger.gamma,
                   "statement": "holds with probability >= 1 - gamma over the neighbouring pair drawn from P"}
    else:
        details = {}
    return [total(method, eps, delta, **details) for method, eps in ledger.totals(delta, "all").items()]


def _check_total(t: Mapping) -> dict:
    keys = {"accounting", "epsilon", "delta", "valid", "details"}
    if not isinstance(t, Mapping) or set(t) - keys or not {"accounting", "epsilon", "delta"} <= set(t):
        raise ValueError(f"a composition_total entry must have the keys {sorted(keys)}, got {t!r}")
    return total(t["accounting"], float(t["epsilon"]), t["delta"], valid=t.get("valid", True), **t.get("details", {}))


#: Report fields that hold only stated parameters, library text, or outcomes of checks on public or released values:
#: public for every producer; every other report field that carries a value has its status given by the producer.
REPORT_STATUSES = {
    f"report.{name}": "public: a stated parameter of the guarantee or the library's own text"
    for name in ("mechanism", "guarantee", "unit", "neighbours", "epsilon", "delta", "gamma", "calibration",
                 "sensitivity_method", "seeded", "notes", "published")
}
REPORT_STATUSES["report.checks"] = ("public: checks of stated parameters and of released values; a producer "
                                    "whose check details depend on the data says so")


#: the :class:`PrivacyReport` fields a step may state beside its statuses, notes, checks and details
STEP_FIELDS = ("gamma", "sampling_distribution", "sensitivity", "sensitivity_method", "sigma", "calibration",
               "sigma_alternatives")


@dataclass(frozen=True)
class ReportParts:
    """What one step of a release states about itself, for :func:`compose_report` to compose.

    ``published``: the status (:data:`STATUSES`) of each quantity the step publishes, by its dotted path in the
    release file; every data-dependent report field must be listed (the stated parameters are
    :data:`REPORT_STATUSES`). ``details``: public facts and released values only (exact statistics of the private
    data go to the release's ``diagnostics``). ``report_fields``: any of :data:`STEP_FIELDS`.
    """

    published: Mapping[str, str] = field(default_factory=dict)
    notes: Sequence[str] = ()
    checks: Sequence[Check] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    report_fields: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.report_fields) - set(STEP_FIELDS)
        if unknown:
            raise ValueError(f"ReportParts.report_fields takes {STEP_FIELDS}; got {sorted(unknown)}")


def compose_report(*steps: ReportParts, mechanism: str, guarantee: str, unit: str, neighbours: str, epsilon: float,
                   delta: float, seeded: bool, composition: Sequence[Mapping] = (),
                   composition_total: Sequence[Mapping] = ()) -> "PrivacyReport":
    """The one place a :class:`PrivacyReport` is made: the release's statement (:class:`PrivacyReport`'s fields;
    ``composition`` the ledger's entries, ``composition_total`` from :func:`total` or :func:`ledger_totals`) and its
    steps' parts in order (a later step's status, detail or field wins; notes and checks are kept in order)."""
    published = {**REPORT_STATUSES, **{k: v for step in steps for k, v in step.published.items()}}
    details = {k: v for step in steps for k, v in step.details.items()}
    step_fields = {k: v for step in steps for k, v in step.report_fields.items()}
    notes = [note for step in steps for note in step.notes]
    checks = [check for step in steps for check in step.checks]
    return PrivacyReport(
        mechanism=mechanism, guarantee=guarantee, unit=unit, neighbours=neighbours, epsilon=float(epsilon),
        delta=float(delta), seeded=bool(seeded), composition=_jsonable(list(composition)),
        composition_total=list(composition_total), notes=notes, checks=checks, details=_jsonable(details),
        published=published, **step_fields,
    )


def extend_report(report: "PrivacyReport", step: ReportParts, *, notes_first: Sequence[str] = (),
                  **statement) -> "PrivacyReport":
    """``report`` with one more step after its own (its statuses, details and fields win, its checks follow) and
    ``notes_first`` before its notes; ``statement`` replaces any of the release-wide keywords of
    :func:`compose_report` (normalised alike). A pipeline extends its mechanism's report so, composing it once."""
    for name, cast in (("epsilon", float), ("delta", float), ("seeded", bool),
                       ("composition", lambda c: _jsonable(list(c))), ("composition_total", list)):
        if name in statement:
            statement[name] = cast(statement[name])
    return replace(report, published={**report.published, **step.published},
                   notes=[*notes_first, *report.notes, *step.notes], checks=[*report.checks, *step.checks],
                   details=_jsonable({**report.details, **step.details}),
                   **{**dict(step.report_fields), **statement})


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
