"""A release charged to a persisted ledger: planned before the private data is read, completed after.

With ``ReleaseRequest(ledger=...)`` (``topicdp privatize ... --ledger FILE``) the pipeline

1. plans the run's entries from public facts only (:func:`planned_steps`: the unit count, a DP vocabulary, the
   topics' mechanism; the costliest of the plan's candidate mechanisms when the choice waits for the count),
   checks them against what the ledger's other runs have left, and writes them to the file, durably, before
   it reads the corpus; or refuses with the figures (:class:`topicdp.rdp.BudgetExceededError`);
2. runs with an in-memory ledger (:class:`RunLedger`) whose every check -- each producer checks its entries
   just before it draws their noise -- is matched against the plan; entries the plan did not foresee (another
   mechanism chosen) are re-planned in the file, under its lock and its budget, before their noise;
3. completes the run with the entries it drew (recorded, or checked and not yet recorded when it stopped):
   from then on they count instead of the plan. A run killed before this step stays counted at its plan.

Random-DP releases are recorded in the ledger's random-DP scope: never charged to its DP budget, and the
release's report says so.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Tuple

from ..rdp import ApproxEntry, GaussianEntry, PrivacyLedger, calibrate_gaussian
from ..rdp.ledger import labelled
from ..rdp.ledger_file import LedgerFileError, LedgerOptions, basic, spent

if TYPE_CHECKING:
    from ..rdp.ledger import Entry
    from .plan import ReleasePlan

#: the topics' mechanisms whose entries a run charged to a ledger can plan before reading the corpus
PLANNED_MECHANISMS = ("dp-vem", "gaussian-global", "laplace", "spectral-config-1", "spectral-config-2",
                      "spectral-config-3", "spectral-config-4")  # exactly; others as their (epsilon, delta)


@dataclass(frozen=True)
class PlannedRun:
    """A run's planned entries, from public facts only: the steps before the topics (the unit count, a DP
    vocabulary), in order, and the topics' entries of each candidate mechanism."""

    steps: "List[Tuple[str, List[Entry]]]"
    topics: "Dict[str, List[Entry]]"

    @property
    def fixed(self) -> "List[Entry]":
        return [e for _, entries in self.steps for e in entries]

    def worst(self, others: "List[Entry]", delta: float) -> "List[Entry]":
        """The candidate's topics entries that compose worst with ``others`` and the fixed steps at ``delta``."""
        fixed = self.fixed
        return max(self.topics.values(), key=lambda t: _total(others + fixed + t, delta))

    def labelled(self, **labels: Any) -> "PlannedRun":
        return PlannedRun([(name, labelled(es, **labels)) for name, es in self.steps],
                          {m: labelled(es, **labels) for m, es in self.topics.items()})


def planned_steps(plan: "ReleasePlan") -> PlannedRun:
    """The entries each step of ``plan`` will record, from public facts only (:class:`PlannedRun`)."""
    request = plan.request
    labels: dict[str, Any] = {"unit": str(request.unit), "neighbours": str(request.neighbours)}
    if request.guarantee == "random-dp":
        from .request import model_label

        a = request.topicdp
        sigma = calibrate_gaussian(request.epsilon, request.delta, 1.0, method=a.calibration)
        return PlannedRun([], {model_label(a.model): [GaussianEntry("TopicDP release (planned)", sigma, 1.0,
                                                                    gamma=a.sampling.gamma, **labels)]})
    steps: "List[Tuple[str, List[Entry]]]" = []
    if plan.budget.count is not None:
        b = plan.budget.count
        steps.append(("unit count", [GaussianEntry("unit count", calibrate_gaussian(b.epsilon, b.delta, 1.0,
                                                                                    method="analytic"), 1.0,
                                                   **labels)]))
    if plan.budget.vocabulary is not None:
        from ..vocabulary import (DEFAULT_MAX_WORDS_PER_UNIT, THRESHOLD_DELTA_SHARE, _ledger_entries, _sensitivity,
                                  calibrate_selection)

        b, neighbours = plan.budget.vocabulary, str(request.neighbours)
        sigma, _ = calibrate_selection(b.epsilon, b.delta, DEFAULT_MAX_WORDS_PER_UNIT, neighbours)
        steps.append(("vocabulary", _ledger_entries(sigma, _sensitivity(neighbours), THRESHOLD_DELTA_SHARE * b.delta,
                                                    str(request.unit), neighbours)))
    return PlannedRun(steps, {m: topics_entries(plan, m) for m in plan.candidates})


def topics_entries(plan: "ReleasePlan", mechanism: str) -> "List[Entry]":
    """The entries the topics' ``mechanism`` records at the plan's topics budget (its check's entries)."""
    request, b = plan.request, plan.budget.topics
    unit, neighbours = str(request.unit), str(request.neighbours)
    if mechanism == "dp-vem":
        from ..variational import planned_entry
        from .mechanisms import DP_VEM_ITERATIONS

        n_iterations = DP_VEM_ITERATIONS[plan.reference is not None]  # from public topics when there is P
        return [planned_entry(b.epsilon, b.delta, unit=unit, neighbours=neighbours, n_iterations=n_iterations)]
    if mechanism in ("gaussian-global", "laplace"):  # the registry row's own TopicDP (it reads no unit count)
        from .mechanisms import MECHANISMS

        return [MECHANISMS[mechanism].estimator(plan, 0, None)._planned_entry(request.n_topics)]
    if mechanism.startswith("spectral-config-"):  # the registry row's own SpectralDP, as the pipeline runs it
        from .mechanisms import MECHANISMS

        return MECHANISMS[mechanism].estimator(plan, request.n_units or 0, None).planned_entries()
    # DP-SVI: its sampling rate waits for the count. Planned as what it is calibrated to, an (epsilon, delta)
    # pair composed by basic composition (an upper bound of its event's cost), and re-planned exactly, in the
    # file and under its budget, when it checks its event just before its noise
    return [ApproxEntry(f"{mechanism} (planned as its (epsilon, delta))", b.epsilon, b.delta, unit=unit,
                        neighbours=neighbours)]


def _same(a: "List[Entry]", b: "List[Entry]") -> bool:
    return [replace(e, name="") for e in a] == [replace(e, name="") for e in b]


@dataclass
class RunLedger(PrivacyLedger):
    """The in-memory ledger of one run charged to a persisted ledger (:class:`Charge`): every check -- made just
    before the noise of its entries -- is matched against the run's plan in the file, or re-planned there."""

    charge: Any = None
    pending: List[list] = field(default_factory=list)

    def check(self, entries) -> None:
        entries = list(entries)
        super().check(entries)
        if self.charge is not None:
            self.charge.before_noise(self, entries)
            self.pending.append(entries)

    def record(self, entries) -> None:
        entries = list(entries)
        if self.pending:  # the entries of the last check, drawn: in memory (labels checked), the check settled
            PrivacyLedger.check(self, entries)
        else:  # a record with no check before it (the unit count: recorded, then drawn) is its own check
            self.check(entries)
        self._entries.extend(entries)
        self.pending.pop(0)

    def drawn(self) -> "List[Entry]":
        """Every entry whose noise may have been drawn: recorded, or checked and not recorded (a stop between)."""
        return list(self.records) + [e for entries in self.pending for e in entries]


class Charge:
    """One run's account in a persisted ledger: :meth:`reserve` before reading, :meth:`complete` after."""

    def __init__(self, plan: "ReleasePlan", options: LedgerOptions) -> None:
        request = plan.request
        self.plan, self.options = plan, options
        self.ledger = PrivacyLedger.open(options.path)
        header = self.ledger.file.state().header  # type: ignore[union-attr]
        for attr in ("unit", "neighbours"):
            if str(getattr(request, attr)) != header[attr]:
                why = (" (the number of units stated: n_units=N)" if attr == "neighbours" and request.n_units
                       else " (the number of units not stated)" if attr == "neighbours" else "")
                raise LedgerFileError(f"ledger {options.path} composes {header['unit']}-level releases under "
                                      f"{header['neighbours']} neighbours; this release is {attr} "
                                      f"{getattr(request, attr)}{why}; nothing was read or spent")
        self.random_dp = request.guarantee == "random-dp"
        self.guarantee: dict = {"epsilon": request.epsilon, "delta": request.delta}
        if self.random_dp:
            self.guarantee["gamma"] = request.topicdp.sampling.gamma
        self.steps: List[List[Entry]] = []
        self.run: Optional[str] = None
        self.partition = options.partition
        self.partition_labels = options.partition_labels()  # the part and the partitioning it is a part of

    def _label(self, entries: "List[Entry]") -> "List[Entry]":
        """``entries`` as the ledger composes them: with this run's partition, if any."""
        return entries if self.partition is None else labelled(entries, **self.partition_labels)

    def reserve(self) -> None:
        """Plan the run in the file (durably), or refuse with the figures; before any private data is read."""
        planned = planned_steps(self.plan)
        if self.partition is not None:
            planned = planned.labelled(**self.partition_labels)
        ledger, file = self.ledger, self.ledger.file
        assert file is not None
        with file.locked():
            state = file.refresh(ledger)
            worst = planned.worst(state.effective(), state.budget[1])
            self.run = file.reserve(ledger, planned.fixed + worst, guarantee=self.guarantee,
                                    mechanism=" or ".join(planned.topics), corpus=self.plan.request.source.label,
                                    output=self.options.output,
                                    **self.partition_labels)
        self.steps = [entries for _, entries in planned.steps] + [worst]

    def before_noise(self, run_ledger: RunLedger, entries: "List[Entry]") -> None:
        """``entries`` are about to be drawn: the next step of the plan, or a re-plan in the file."""
        entries = self._label(entries)
        if self.steps and _same(entries, self.steps[0]):
            self.steps.pop(0)
            return
        assert self.ledger.file is not None and self.run is not None
        later = [e for step in self.steps[1:] for e in step]
        self.ledger.file.reserve(self.ledger, self._label(run_ledger.drawn()) + entries + later, run=self.run,
                                 guarantee=self.guarantee, mechanism=_mechanism(entries))
        self.steps = self.steps[1:]

    def run_ledger(self) -> RunLedger:
        return RunLedger(charge=self)

    def complete(self, run_ledger: RunLedger, status: str, mechanism: Optional[str] = None) -> dict:
        """Write what the run drew and its status; return the dataset's totals so far (for the report)."""
        assert self.ledger.file is not None and self.run is not None
        info = {} if mechanism is None else {"mechanism": mechanism}
        self.ledger.file.complete(self.ledger, self.run, self._label(run_ledger.drawn()), status=status, **info)
        return self.totals()

    def totals(self) -> dict:
        """The dataset's totals now (the file's runs), and the report's line after its headline."""
        assert self.ledger.file is not None
        summary = self.ledger.file.summary(PrivacyLedger)
        dp, (eps_b, delta_b) = summary["dp"], (summary["budget"]["epsilon"], summary["budget"]["delta"])
        line = (f"dataset total        ({dp['spent']:.4g}, {delta_b:.3g})-DP over the {dp['n_runs']} DP run(s) of "
                f"ledger {self.options.path} by exact composition ({dp['basic']['epsilon']:.4g} at delta "
                f"{dp['basic']['delta']:.3g} by basic composition); budget epsilon {eps_b:g}, "
                f"{dp['remaining']:.4g} left")
        if self.random_dp:
            line += ("; this random-DP release is in the ledger's random-DP scope, not counted in (nor fitting "
                     "within) its DP budget")
        return {"file": self.options.path, "run": self.run, "scope": "random-DP" if self.random_dp else "DP",
                "spent": dp["spent"], "basic": dp["basic"], "budget": [eps_b, delta_b],
                "remaining": dp["remaining"], "line": line}


def open_charge(plan: "ReleasePlan", say: Callable[[str], None]) -> Optional[Charge]:
    """The run's :class:`Charge` when its request names a ledger (planned in the file, or refused), else None."""
    options = plan.request.ledger
    if options is None:
        return None
    assert isinstance(options, LedgerOptions)  # the request makes a path one
    charge = Charge(plan, options)
    charge.reserve()
    t = charge.totals()
    scope = ("its random-DP scope (not counted in the DP budget)" if charge.random_dp
             else f"exact composition with the dataset's other runs: {t['spent']:.4g} of epsilon {t['budget'][0]:g} "
                  f"at delta {t['budget'][1]:g}, counting this run as planned")
    say(f"ledger {options.path}: this run is planned in {scope}")
    return charge


@contextlib.contextmanager
def charged(charge: Optional[Charge], ledger: PrivacyLedger) -> Iterator[Callable[[Any], None]]:
    """Complete ``charge``'s run when the block ends: ``done(release)`` after a release (its report's details
    get the dataset's totals), else -- a refusal, an error, an interruption -- with what the run drew."""
    def done(release) -> None:
        if charge is not None:
            details = charge.complete(run_ledger=ledger, status="released",  # type: ignore[arg-type]
                                      mechanism=getattr(release.report, "mechanism", None))
            release.report.details["ledger"] = {**details, "file": os.path.basename(details["file"])}
            release.report.published["report.details.ledger"] = (
                "post-processing: the dataset's totals, composed from the ledger's entries (public parameters and "
                "DP outputs of its runs)")

    try:
        yield done
    except BaseException as exc:
        if charge is not None and charge.run is not None:
            status = stop_status(exc)
            try:
                charge.complete(ledger, status)  # type: ignore[arg-type]
            except Exception as failed:  # the plan stays counted: over-counting, never under-counting
                logging.getLogger("topicdp").warning(f"ledger {charge.options.path}: the stopped run could not be "
                                                     f"completed ({failed}); it stays counted at its plan")
        raise


def stop_status(exc: BaseException) -> str:
    """The status a stopped run leaves in the ledger: the category of ``exc``, never its message.

    An exception's text may quote the private data (an empty corpus, a line of a file, a count), and the ledger
    file is not the owner's private diagnostics: it is kept beside the releases and read by whoever manages the
    budget. So the status says only why, as a category: ``"stopped: refused"`` (the pipeline or its plan refused
    the release, :class:`~topicdp.pipeline.ReleaseRefused`), ``"stopped: budget"``
    (:class:`~topicdp.rdp.BudgetExceededError`), ``"stopped: interrupted"`` (Ctrl-C, SIGTERM, SIGHUP) or
    ``"stopped: error (<exception class>)"``. A refusal the pipeline made of another exception (it turns every
    error after a spend into one) is told by its cause: a budget, a refusal (a ``ValueError``: the data or the
    parameters do not allow the release) or an error (a file gone: ``OSError``).
    """
    from ..rdp import BudgetExceededError
    from .run import ReleaseRefused

    if isinstance(exc, KeyboardInterrupt):
        return "stopped: interrupted"
    cause = exc.__cause__ if isinstance(exc, ReleaseRefused) else None
    if isinstance(exc, BudgetExceededError) or isinstance(cause, BudgetExceededError):
        return "stopped: budget"
    if isinstance(exc, ReleaseRefused) and (cause is None or isinstance(cause, ValueError)):
        return "stopped: refused"
    return f"stopped: error ({type(cause or exc).__name__})"


def _total(entries: "List[Entry]", delta: float) -> float:
    ledger = PrivacyLedger()
    ledger._entries = [e for e in entries if e.gamma is None]
    return spent(ledger, delta, "dp")


def _mechanism(entries: "List[Entry]") -> str:
    return ", ".join(sorted({e.name.removesuffix(" (planned)") for e in entries}))


__all__ = ["Charge", "LedgerOptions", "PLANNED_MECHANISMS", "PlannedRun", "RunLedger", "basic", "charged",
           "open_charge", "planned_steps", "stop_status", "topics_entries"]
