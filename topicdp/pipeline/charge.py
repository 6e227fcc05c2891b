"""A release charged to a persisted ledger step by step: each step written durably before its noise is drawn.

Before the corpus is read (:meth:`Charge.reserve`) the run's planned entries
(:func:`topicdp.pipeline.plan.planned_steps`) are checked, refused where even the cheapest candidate does not fit,
and the steps known to run written; a road chosen after the count has its topics planned then
(:meth:`Charge.plan_topics`), so a run is never charged for a road it did not pick. The run's :class:`RunLedger`
matches every check against the plan, re-planning what it could not foresee (DP-SVI's event at its rate); a run
killed before completing stays counted at its plan. Random-DP releases go to the ledger's random-DP scope. What each
step spends is the plan's and the roads'; this module keeps the file's bookkeeping.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, Iterator, List, Optional

from ..rdp import BudgetExceededError, PrivacyLedger
from ..rdp.ledger import Entry, labelled
from ..rdp.ledger_file import LedgerFileError, LedgerOptions, _check_fits, basic_phrase
from .plan import PlannedRun, ReleasePlan, planned_steps
from .request import ReleaseRefused, join_and

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

    def plan_topics(self, mechanism: str, reason: str = "") -> None:
        """Plan ``mechanism``'s topics in the file before their noise (:meth:`Charge.plan_topics`), if there is one."""
        if self.charge is not None:
            self.charge.plan_topics(self, mechanism, reason)


class Charge:
    """One run's account in a persisted ledger, step by step (module docstring): :meth:`reserve` before reading,
    :meth:`plan_topics` once the mechanism is chosen, :meth:`before_noise` at every check, :meth:`complete` after."""

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
        #: the steps planned in the file whose check has not come yet, in order
        self.steps: List[List[Entry]] = []
        self.run: Optional[str] = None
        self.partition_labels = options.partition_labels()  # the part and the partitioning it is a part of
        self.planned: Optional[PlannedRun] = None
        #: whether the topics' entries are in the file (planned before reading, or once the mechanism was chosen)
        self.topics_planned = False
        #: each candidate's total with the other runs and the steps before the topics, as checked before reading
        self.costs: Dict[str, float] = {}

    def _label(self, entries: "List[Entry]") -> "List[Entry]":
        """``entries`` as the ledger composes them: with this run's partition, if any."""
        return labelled(entries, **self.partition_labels) if self.partition_labels else entries

    def reserve(self) -> None:
        """Before any private data is read: refuse, with the figures, a run that cannot fit even by its cheapest path,
        else plan in the file the steps known to run (the count, the vocabulary; the topics of a single candidate)."""
        planned = planned_steps(self.plan)
        if self.partition_labels:
            planned = planned.labelled(**self.partition_labels)
        ledger, file = self.ledger, self.ledger.file
        assert file is not None
        one = len(planned.topics) == 1
        with file.locked():
            state = file.refresh(ledger)
            self.costs = planned.costs(state.effective(), state.budget[1])
            name = planned.cheapest(state.effective(), state.budget[1])
            cheapest = planned.topics[name]
            try:  # the cheapest path: if it does not fit, no candidate does
                _check_fits(ledger, state, planned.fixed + cheapest, self.guarantee, exclude=None)
            except BudgetExceededError as exc:
                if not one:
                    before = "" if not planned.steps else f"{_steps_named(planned)} and "
                    exc.args = (f"{exc.args[0]}. Checked before reading: {before}the topics by {name}, the cheapest "
                                f"of the mechanisms the plan chooses from ({', '.join(planned.topics)}), which is "
                                "what 'this run plans' counts: no candidate fits",)
                raise
            self.run = file.reserve(ledger, planned.fixed + (cheapest if one else []), guarantee=self.guarantee,
                                    mechanism=" or ".join(planned.topics), corpus=self.plan.request.source.label,
                                    output=self.options.output,
                                    **self.partition_labels)
        self.planned, self.topics_planned = planned, one
        self.steps = [entries for _, entries in planned.steps] + ([cheapest] if one else [])

    def plan_topics(self, run_ledger: RunLedger, mechanism: str, reason: str = "") -> None:
        """The plan has chosen ``mechanism`` (for ``reason``) after the count: write its topics' entries to the file
        after the steps so far, or refuse naming the mechanism, the figures and the candidates that would fit."""
        if self.topics_planned:
            return
        entries = self._label(self.plan.topics_entries(mechanism))
        planned = [e for step in self.steps for e in step]
        step = f"the topics by {mechanism}, the mechanism the plan chose" + (f" ({reason})" if reason else "")
        self._plan_in_file(run_ledger, self._label(run_ledger.drawn()) + planned + entries, mechanism, step,
                           chosen=mechanism)
        self.steps.append(entries)
        self.topics_planned = True

    def before_noise(self, run_ledger: RunLedger, entries: "List[Entry]") -> None:
        """``entries`` are about to be drawn: the next step planned in the file, or a re-plan there (in place of
        that step: another mechanism's entries, DP-SVI's event at its rate) before their noise."""
        entries = self._label(entries)
        if self.steps and _same(entries, self.steps[0]):
            self.steps.pop(0)
            return
        later = [e for step in self.steps[1:] for e in step]
        name = _mechanism(entries)
        self._plan_in_file(run_ledger, self._label(run_ledger.drawn()) + entries + later, name,
                           f"{name} (re-planned before its noise)" if self.steps else f"{name} (planned before its noise)")
        if not self.steps:  # beyond every step planned: the topics, checked by a caller that did not plan them
            self.topics_planned = True
        self.steps = self.steps[1:]

    def _plan_in_file(self, run_ledger: RunLedger, entries: "List[Entry]", mechanism: str, step: str,
                      chosen: Optional[str] = None) -> None:
        """Write ``entries`` as this run's plan (what it drew and will draw) before ``step``'s noise, or refuse."""
        assert self.ledger.file is not None and self.run is not None
        try:
            self.ledger.file.reserve(self.ledger, entries, run=self.run, guarantee=self.guarantee,
                                     mechanism=mechanism)
        except BudgetExceededError as exc:
            exc.args = (self._refusal(exc, run_ledger, step, chosen),)
            raise

    def _refusal(self, exc: BudgetExceededError, run_ledger: RunLedger, step: str, chosen: Optional[str]) -> str:
        """A refusal after reading: the step, the figures (exact and basic composition), the candidates that fit."""
        eps_b, delta_b = exc.budget
        b = getattr(exc, "basic", None)
        by_basic = "" if b is None else f"; {basic_phrase(b)}"
        fitting = ([] if chosen is None else
                   [m for m in self.plan.candidates if m != chosen and self._fits(run_ledger, m)])
        hint = "" if not fitting else (f"; {' and '.join(fitting)} would fit (name it: mechanism='{fitting[0]}', "
                                       f"--mechanism {fitting[0]})")
        drawn = _mechanism(run_ledger.drawn()) or "nothing"
        return (f"the ledger {self.options.path} has no room for {step}: by exact composition (the ledger's "
                f"accounting, at delta={delta_b:g}) the dataset's other runs spent {exc.spent:.4g}, this run plans "
                f"{exc.requested:.4g} (what it drew: {drawn}; and this step), together {exc.total:.4g}, over the "
                f"budget epsilon={eps_b:g}{by_basic}{hint}. This step's noise was not drawn")

    def _fits(self, run_ledger: RunLedger, mechanism: str) -> bool:
        """Whether the topics by ``mechanism`` would fit after what this run drew and planned (the ledger's check)."""
        ledger, file = self.ledger, self.ledger.file
        assert file is not None
        mine = (self._label(run_ledger.drawn()) + [e for step in self.steps for e in step]
                + self._label(self.plan.topics_entries(mechanism)))
        with file.locked():
            file.refresh(ledger, exclude=self.run)
            try:
                ledger.check(mine)
            except BudgetExceededError:
                return False
        return True

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
    """The run's :class:`Charge` (its first steps planned, or refused) when its request names a ledger, else None."""
    options = plan.request.ledger
    if options is None:
        return None
    assert isinstance(options, LedgerOptions)  # the request makes a path one
    charge = Charge(plan, options)
    charge.reserve()
    t = charge.totals()
    so_far = (f"exact composition with the dataset's other runs: {t['spent']:.4g} of epsilon {t['budget'][0]:g} at "
              f"delta {t['budget'][1]:g}")
    if charge.random_dp:
        line = "this run is planned in its random-DP scope (not counted in the DP budget)"
    elif charge.topics_planned:
        line = f"this run is planned in {so_far}, counting this run as planned"
    else:
        assert charge.planned is not None
        costs = charge.costs
        low, high = min(costs, key=costs.__getitem__), max(costs, key=costs.__getitem__)
        steps = _steps_named(charge.planned)
        line = ((f"{steps} of this run {'is' if len(charge.planned.steps) == 1 else 'are'} planned in {so_far}"
                 if charge.planned.steps else f"this run is registered with no step before its topics ({so_far})")
                + f"; its topics are planned once the plan has chosen the mechanism (with {low}, the cheapest "
                  f"candidate, the total would be {costs[low]:.4g}; with {high}, the costliest, {costs[high]:.4g})")
    say(f"ledger {options.path}: {line}")
    return charge


def _steps_named(planned: PlannedRun) -> str:
    """The steps before the topics, as a refusal or a line names them ("the unit count and the vocabulary")."""
    return join_and([f"the {name}" for name, _ in planned.steps]) if planned.steps else "nothing"


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
    """The status a stopped run leaves in the ledger: the category of ``exc`` (or of the cause of a
    :class:`~topicdp.pipeline.ReleaseRefused`), never its message, which may quote the private data while the ledger
    is read by whoever manages the budget: ``"stopped: refused"``, ``"stopped: budget"``, ``"stopped: interrupted"``
    or ``"stopped: error (<exception class>)"``."""
    if isinstance(exc, KeyboardInterrupt):
        return "stopped: interrupted"
    cause = exc.__cause__ if isinstance(exc, ReleaseRefused) else None
    if isinstance(exc, BudgetExceededError) or isinstance(cause, BudgetExceededError):
        return "stopped: budget"
    if isinstance(exc, ReleaseRefused) and (cause is None or isinstance(cause, ValueError)):
        return "stopped: refused"
    return f"stopped: error ({type(cause or exc).__name__})"


def _mechanism(entries: "List[Entry]") -> str:
    return ", ".join(sorted({e.name.removesuffix(" (planned)") for e in entries}))
