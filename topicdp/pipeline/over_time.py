"""Topics released over time: one release per stated period under one persisted ledger, topics matched across periods.

:func:`release_over_time` splits a JSON Lines corpus by a date field into the periods the owner states (never read
from the data) and releases each by :func:`topicdp.pipeline.prepare` and :func:`~topicdp.pipeline.release_prepared`,
charged to the request's persisted ledger. At the document level under add/remove neighbours a document's period is a
function of its own date, so the periods are disjoint and compose in parallel (McSherry 2009, "Privacy integrated
queries", Thm. 4): each gets the whole budget, and the ledger counts the worst part of the series' partitioning
(:func:`series_partitioning`). Otherwise (a user in several periods, a replaced document moving to another period)
they compose sequentially, each at the largest ``(epsilon_p, delta / P)`` whose P runs compose exactly to the total
(:func:`period_budgets`). Every period's count is paid for, an empty period released like any other (emptiness is
private); records in no period are said only as a DP count that costs nothing of the split (:func:`left_out`).
Matching topics across periods is post-processing (:func:`match_topics`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import gzip
import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._dates import check_date_format, parse_date
from .._files import atomic_path, scratch_directory
from .._validation import check_option
from ..rdp import GaussianEntry, PrivacyLedger
from ..rdp.ledger import Entry, labelled, partitioning_key
from ..rdp.ledger_file import LedgerFileError, LedgerOptions
from ..topics import matching, top_indices
from .plan import ReleasePlan, dp_total, plan_request, planned_steps
from .request import ReleaseRequest

PERIODS = ("month", "quarter")
#: the part of a series' partitioning holding the records without a usable date (in no period of any series of it)
NO_USABLE_DATE = "no usable date"
_ISO_DAY = re.compile("[0-9]{4}-[0-9]{2}-[0-9]{2}")
logger = logging.getLogger("topicdp")


def period_of(date: str, period: str, date_format: Optional[str] = None) -> str:
    """The label of the period holding ``date``: ``"2004-05"`` (month) or ``"2001Q3"`` (quarter).

    Without ``date_format`` only ISO 8601's extended calendar form ``YYYY-MM-DD...`` in ASCII digits is read (not
    the other forms Python 3.11's :meth:`datetime.date.fromisoformat` takes); with it, :func:`topicdp._dates.parse_date`
    reads the whole date (English month names, ASCII digits, whatever the locale), not :func:`time.strptime`. A
    document's period (and whether it has a usable date, :data:`NO_USABLE_DATE`) must be the same function of it in
    every run that charges the ledger. ValueError for a date that does not read."""
    day = parse_date(date, date_format) if date_format is not None else _iso_day(date)
    return _label(day.year * 12 + day.month - 1 if period == "month" else day.year * 4 + (day.month - 1) // 3, period)


def _iso_day(date: str) -> _dt.date:
    """The day an ISO 8601 date or date-time (``YYYY-MM-DD...``, ASCII digits) starts with (:func:`period_of`)."""
    text = str(date)[:10]
    try:
        if not _ISO_DAY.fullmatch(text):
            raise ValueError
        return _dt.date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"date {date!r} is not an ISO 8601 date (YYYY-MM-DD...)") from None


def _index(label: str, period: str) -> int:
    try:
        if period == "month":
            year, month = label.split("-")
            return int(year) * 12 + int(month) - 1
        year, quarter = label.split("Q")
        if not 1 <= int(quarter) <= 4:
            raise ValueError
        return int(year) * 4 + int(quarter) - 1
    except ValueError:
        example = "2004-05" if period == "month" else "2001Q3"
        raise ValueError(f"period {label!r} is not a {period} label like {example!r}") from None


def _label(index: int, period: str) -> str:
    if period == "month":
        return f"{index // 12:04d}-{index % 12 + 1:02d}"
    return f"{index // 4:04d}Q{index % 4 + 1}"


@dataclass(frozen=True)
class PeriodSpec:
    """The periods of a release over time, stated by the owner: ``start`` to ``end`` inclusive (``"2004-05"``,
    ``"2000Q1"``), each record placed by its ``date_field`` written as ``date_format`` says (``strptime``'s directives,
    ``"%d,%B,%Y"`` for ``"14,May,2004"``; default ISO 8601; :func:`period_of`). A record outside them or without a
    usable date is in no period; another format is another partition (:func:`series_partitioning`)."""

    period: str
    start: str
    end: str
    date_field: str = "date"
    date_format: Optional[str] = None

    def __post_init__(self) -> None:
        check_option(self.period, "period", PERIODS)
        if _index(self.end, self.period) < _index(self.start, self.period):
            raise ValueError(f"end ({self.end}) must not be before start ({self.start})")
        if not isinstance(self.date_field, str) or not self.date_field:
            raise ValueError(f"date_field must be a non-empty field name, got {self.date_field!r}")
        if self.date_format is not None:
            check_date_format(self.date_format)

    @property
    def labels(self) -> List[str]:
        first, last = _index(self.start, self.period), _index(self.end, self.period)
        return [_label(i, self.period) for i in range(first, last + 1)]


def parallel(request: ReleaseRequest) -> bool:
    """Whether the periods of ``request`` compose in parallel: document level with add/remove neighbours."""
    return str(request.unit) == "document" and str(request.neighbours) == "add-remove"


def period_budgets(request: ReleaseRequest, spec: PeriodSpec) -> Tuple[float, float, str]:
    """``(epsilon_p, delta_p, how)``: each period's budget for the total of ``request`` (module docstring)."""
    n = len(spec.labels)
    if parallel(request) or n == 1:
        return request.epsilon, request.delta, (f"each of the {n} periods gets the whole ({request.epsilon:g}, "
                                                f"{request.delta:g}): disjoint documents compose in parallel")
    delta_p = request.delta / n

    def total(eps_p: float) -> float:
        planned = planned_steps(_period_plan(request, eps_p, delta_p))
        return dp_total((planned.fixed + planned.worst([], request.delta)) * n, request.delta)

    low, high = request.epsilon / n, request.epsilon  # epsilon / n always fits (basic composition)
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if total(mid) <= request.epsilon else (low, mid)
    return low, delta_p, (f"{n} periods compose sequentially (a user in several periods is charged in each): each "
                          f"gets ({low:.4g}, {delta_p:.3g}), which compose exactly to at most ({request.epsilon:g}, "
                          f"{request.delta:g}) (basic composition would give each {request.epsilon / n:.4g})")


@dataclass(frozen=True)
class LeftOut:
    """What a series publishes about the records it leaves out of every period (:func:`left_out`).

    ``records``: ``"no usable date"``, ``"outside the periods"``, or both. ``status``: ``"DP"`` (``value`` is a
    Gaussian count of them, rounded and floored at 0, noise ``sigma`` at sensitivity 1, charged to the ledger),
    ``"not counted"`` (no number; ``reason`` says why) or ``"refused"`` (the ledger had no room for the count,
    ``reason``; its noise was not drawn).
    """

    records: str
    status: str
    value: Optional[int] = None
    sigma: Optional[float] = None
    reason: str = ""


@dataclass
class OverTimeResult:
    """What :func:`release_over_time` returns: period -> its release (``releases``) or why it was refused
    (``refused``), and its topic order matching the first released period's (``order``); each period's (epsilon,
    delta) and how the total was split (``budget``), the series' whole (``total``); what it published about the
    records in no period (``left_out``) and their exact counts, for the owner only (``diagnostics``)."""

    periods: List[str]
    releases: Dict[str, object] = field(default_factory=dict)
    refused: Dict[str, str] = field(default_factory=dict)
    order: Dict[str, np.ndarray] = field(default_factory=dict)
    budget: Tuple[float, float, str] = (0.0, 0.0, "")
    total: Tuple[float, float] = (0.0, 0.0)
    unit: str = ""
    neighbours: str = ""
    diagnostics: Dict[str, int] = field(default_factory=dict, repr=False)
    left_out: List[LeftOut] = field(default_factory=list)

    def matched(self, period: str) -> np.ndarray:
        """The period's released topic-word matrix, its rows in the matched order."""
        return np.asarray(self.releases[period].topic_word)[self.order[period]]  # type: ignore[attr-defined]

    def top_words(self, n_words: int = 5) -> Dict[str, List[List[str]]]:
        """Period -> the top words of each matched topic."""
        return {p: [[r.vocabulary[j] for j in row]  # type: ignore[attr-defined]
                    for row in top_indices(self.matched(p), n_words)] for p, r in self.releases.items()}


def release_over_time(request: ReleaseRequest, spec: PeriodSpec, *,
                      echo: Optional[Callable[[str], None]] = None) -> OverTimeResult:
    """Release ``request`` once per period of ``spec``, under the request's persisted ledger (module docstring).

    ``request`` states the whole series' total budget, unit, K, vocabulary and mechanism; its source is a JSON Lines
    file with ``spec.date_field``, its ``ledger`` a persisted ledger (required), and ``n_units`` is not given (each
    period's count is paid for). ``echo`` receives each line (default: INFO on the ``topicdp`` logger). Raises
    :class:`~topicdp.rdp.BudgetExceededError` before anything is read when the series does not fit in what the
    ledger has left; a period refused later is listed in ``refused``, what it drew staying charged.
    """
    from .run import prepare, read_reference, release_prepared

    say = echo or logger.info
    if request.ledger is None:
        raise ValueError("ledger: a release over time is charged to a persisted ledger (ReleaseRequest(ledger=...))")
    if request.n_units is not None:
        raise ValueError("n_units states the count of the whole corpus, not of a period: leave it out (each "
                         "period's count is paid for under DP)")
    if request.source.built_in or request.source.sharded or request.source.format != "jsonl":
        raise ValueError("a release over time reads one JSON Lines file with a date field")
    assert isinstance(request.ledger, LedgerOptions)
    labels = spec.labels
    eps_p, delta_p, how = period_budgets(request, spec)
    say(f"over time: {len(labels)} {spec.period}s {labels[0]} to {labels[-1]} (stated); {how}")
    partitioning = series_partitioning(request, spec)
    _check_series(request, labels, eps_p, delta_p, partitioning)
    result = OverTimeResult(labels, budget=(eps_p, delta_p, how), total=(request.epsilon, request.delta),
                            unit=str(request.unit), neighbours=str(request.neighbours))
    reference = read_reference(request) if request.reference is not None else None  # public: read once
    with scratch_directory("topicdp-periods-") as work:  # private (0700), removed afterwards, even on SIGTERM
        files = split_by_period(request.source.path, spec, work)
        result.diagnostics = {"no usable date": files.no_usable_date, "outside the periods": files.outside}
        result.left_out = left_out(request, spec, files.no_usable_date, eps_p, delta_p, partitioning)
        for item in result.left_out:
            say(left_out_line(item, spec))
        for index, label in enumerate(labels):
            options = LedgerOptions(request.ledger.path, output=period_file(request.ledger.output, label),
                                    partition=label if partitioning is not None else None,
                                    partitioning=partitioning)
            period_request = replace(request, source=replace(request.source, path=files[label]), epsilon=eps_p,
                                     delta=delta_p, ledger=options, seed=period_seed(request.seed, index))
            say(f"period {label}:")
            try:
                with prepare(period_request, reference=reference) as prepared:
                    result.releases[label] = release_prepared(prepared.plan, prepared,
                                                              echo=lambda line: say("  " + line)).release
            except ValueError as refused:  # the plan's refusals, the forecast's, the ledger's
                result.refused[label] = str(refused).replace(files[label], f"the {spec.period} {label}")
                say(f"  period {label} refused: {refused}")
    result.order = dict(zip(result.releases, match_topics(list(result.releases.values()))))  # in period order
    return result


def period_seed(seed: Optional[int], index: int) -> Optional[int]:
    """A seeded series' seed of its ``index``-th period: a stream of its own (the same noise added to every period
    would let their differences show the noiseless ones); None (OS entropy) stays None."""
    return None if seed is None else int(np.random.SeedSequence([seed, index]).generate_state(1)[0] % 2**31)


def no_usable_date_seed(seed: Optional[int]) -> Optional[np.random.SeedSequence]:
    """A seeded series' noise for its count of the records without a usable date: a stream of its own, apart from
    every period's (:func:`period_seed`); None (OS entropy) stays None."""
    return None if seed is None else np.random.SeedSequence(seed, spawn_key=(0,))


def no_usable_date_entries(plan: ReleasePlan, partitioning: Optional[str]) -> List[Entry]:
    """The ledger entry of the DP count of the records without a usable date, part :data:`NO_USABLE_DATE` of the
    series' ``partitioning`` (empty without one, or without a unit count in a period's plan): a period's own planned
    unit count under another name, so every period's part dominates it and it changes no total of the ledger."""
    if partitioning is None:
        return []
    counts = [entries for name, entries in planned_steps(plan).steps if name == "unit count"]
    if not counts:
        return []
    return labelled([replace(e, name=f"records with {NO_USABLE_DATE} (DP count)") for e in counts[0]],
                    partition=NO_USABLE_DATE, partitioning=partitioning)


def _period_plan(request: ReleaseRequest, eps_p: float, delta_p: float) -> ReleasePlan:
    """A period's plan at its budget (public facts only): what each period's run and the series' count charge."""
    return plan_request(replace(request, epsilon=eps_p, delta=delta_p, ledger=None))


def left_out(request: ReleaseRequest, spec: PeriodSpec, n_undated: int, eps_p: float, delta_p: float,
             partitioning: Optional[str]) -> List[LeftOut]:
    """What the series publishes about the records in no period; which items come out depends on the request and
    the ledger only, never on the data (only the DP number does).

    With a ``partitioning`` the ``n_undated`` records without a usable date get a Gaussian count
    (:func:`no_usable_date_entries`), planned in the ledger durably before its noise, as a run of its own in part
    :data:`NO_USABLE_DATE`. It is free: a document's part is a function of its own date, and the count (L2
    sensitivity 1, at the sigma of a period's unit count) is dominated by every period's entries, so by parallel
    composition it adds nothing to the worst part. The records dated outside the periods are not counted: they fall
    in periods another series of the partitioning may release, so a count of them would under-count in parallel,
    or spend budget the split did not provide as a partitioning of its own."""
    from .run import gaussian_count

    assert isinstance(request.ledger, LedgerOptions)
    plan = _period_plan(request, eps_p, delta_p)
    entries = no_usable_date_entries(plan, partitioning)
    if not entries:
        why = (f"the periods compose sequentially here ({request.unit} level, {request.neighbours} neighbours), so a "
               "count of them would spend budget the split did not provide")
        return [LeftOut("no usable date or outside the periods", "not counted", reason=why)]
    outside = LeftOut("outside the periods", "not counted", reason=(
        "their dates fall in periods of this partitioning that another series may release, so a count of them "
        "would not compose in parallel with those releases and would spend budget the split did not provide"))
    (entry,) = entries
    assert plan.budget.count is not None and isinstance(entry, GaussianEntry)
    ledger = PrivacyLedger.open(request.ledger.path)
    assert ledger.file is not None
    try:
        run = ledger.file.reserve(ledger, entries, guarantee={"epsilon": plan.budget.count.epsilon,
                                                               "delta": plan.budget.count.delta},
                                  mechanism="gaussian count", corpus=request.source.path,
                                  partition=NO_USABLE_DATE, partitioning=partitioning)
    except ValueError as refused:  # the ledger's refusal (another run took the budget since the series' check)
        return [LeftOut(NO_USABLE_DATE, "refused", reason=str(refused)), outside]
    noisy = gaussian_count(n_undated, entry.sigma, np.random.default_rng(no_usable_date_seed(request.seed)))
    ledger.file.complete(ledger, run, entries, status="released")
    return [LeftOut(NO_USABLE_DATE, "DP", max(0, int(round(noisy))), entry.sigma), outside]  # post-processing


def left_out_line(item: LeftOut, spec: PeriodSpec) -> str:
    """The line a series prints for ``item``: the same text whatever the data hold, but for a DP number."""
    usable = "an ISO 8601 date" if spec.date_format is None else f"a date in the format {spec.date_format!r}"
    undated = f"records without a usable {spec.date_field!r} (missing, or not {usable})"
    if item.status == "DP":
        return (f"{undated}, in no period: about {item.value} (a DP count, noise sigma {item.sigma:.3g}; the exact "
                "number is private)")
    if item.records == NO_USABLE_DATE:
        return f"{undated} are left out of every period; their DP count was refused: {item.reason}"
    which = ("records dated outside the stated periods" if item.records == "outside the periods"
             else f"{undated} or dated outside the stated periods")
    return (f"{which} are left out of every period; how many is not given: {item.reason} (the exact numbers are in "
            "the owner's diagnostics)")


def corpus_digest(path: str) -> str:
    """``"sha256:<hex>"`` of the file's bytes, the corpus's identity in a partitioning's key: series compose in
    parallel only when they split the same bytes (a copy or an edit composes sequentially, an over-count). A
    fingerprint of private data, for the owner's ledger file only (its totals take from it only whether two runs
    read the same bytes, alike for a corpus and its neighbour)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return f"sha256:{h.hexdigest()}"


def series_partitioning(request: ReleaseRequest, spec: PeriodSpec) -> Optional[str]:
    """The partitioning key (:func:`topicdp.rdp.ledger.partitioning_key`) of a series whose periods compose in
    parallel, else None: the corpus's digest, the period kind, the date field and its format (another partition)."""
    if not parallel(request):
        return None
    return partitioning_key(corpus_digest(request.source.path), spec.period, spec.date_field, spec.date_format)


def _check_series(request: ReleaseRequest, labels: Sequence[str], eps_p: float, delta_p: float,
                  partitioning: Optional[str] = None) -> None:
    """Check every period's planned entries (topics by the cheapest candidate) and the undated count together."""
    assert isinstance(request.ledger, LedgerOptions)
    ledger = PrivacyLedger.open(request.ledger.path)
    assert ledger.file is not None
    header = ledger.file.state().header
    if (str(request.unit), str(request.neighbours)) != (header["unit"], header["neighbours"]):
        raise LedgerFileError(f"ledger {request.ledger.path} composes {header['unit']}-level releases under "
                              f"{header['neighbours']} neighbours; this series is {request.unit}-level, "
                              f"{request.neighbours}; nothing was read or spent")
    plan = _period_plan(request, eps_p, delta_p)
    planned = planned_steps(plan)
    run = planned.fixed + planned.topics[planned.cheapest([], header["budget"][1])]  # as one release is checked
    entries = [e for label in labels
               for e in (labelled(run, partition=label, partitioning=partitioning) if partitioning else run)]
    ledger.check(entries + no_usable_date_entries(plan, partitioning))


class PeriodFiles(Dict[str, str]):
    """Period -> its file (:func:`split_by_period`), and how many records are in no period (exact counts of the
    private corpus: the owner's diagnostics, never printed): ``no_usable_date`` and ``outside``."""

    no_usable_date: int = 0
    outside: int = 0


def split_by_period(path: str, spec: PeriodSpec, directory: str) -> PeriodFiles:
    """Write each record of ``path`` (JSON Lines, gzip or plain) to its period's file in the private ``directory``;
    a record without a usable date (missing or bad, alike) or outside the range is counted (:class:`PeriodFiles`)."""
    wanted = set(spec.labels)
    files = PeriodFiles({label: os.path.join(directory, f"{label}.jsonl") for label in spec.labels})
    with contextlib.ExitStack() as stack:  # each period's file put in place whole (private: 0600) once all is read
        handles = {label: stack.enter_context(open(stack.enter_context(atomic_path(name, private=True)), "w",
                                                   encoding="utf-8")) for label, name in files.items()}
        with open(path, "rb") as probe:
            gz = probe.read(2) == b"\x1f\x8b"
        with (gzip.open(path, "rt", encoding="utf-8") if gz else open(path, encoding="utf-8-sig")) as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    date = json.loads(line).get(spec.date_field)
                except (json.JSONDecodeError, AttributeError):
                    raise ValueError(f"{path}:{number}: not a JSON object") from None
                try:
                    label = None if date is None else period_of(date, spec.period, spec.date_format)
                except ValueError:
                    label = None
                if label is None:
                    files.no_usable_date += 1
                elif label in wanted:
                    handles[label].write(line if line.endswith("\n") else line + "\n")
                else:
                    files.outside += 1
    return files


def match_topics(releases: Sequence[object]) -> List[np.ndarray]:
    """For each release, its topics' order matching the previous period's matched topics (post-processing: Hungarian
    assignment on the cosine similarity of the rows over the words both have); the first keeps its order."""
    orders: List[np.ndarray] = []
    previous, previous_words = None, None
    for r in releases:
        W = np.array(r.topic_word, dtype=np.float64)  # type: ignore[attr-defined]
        words = list(r.vocabulary)  # type: ignore[attr-defined]
        if previous is None:
            order = np.arange(W.shape[0])
        else:
            assert previous_words is not None
            shared = sorted(set(words) & set(previous_words))
            a = previous[:, [previous_words.index(w) for w in shared]]
            b = W[:, [words.index(w) for w in shared]]
            a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-300)
            b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-300)
            order = matching(a @ b.T)[1]  # rows come ascending: cols[i] is the match of the previous topic i
        orders.append(order)
        previous, previous_words = W[order], words
    return orders


def plot_over_time(result: OverTimeResult, path: str, *, n_words: int = 4, overwrite: bool = True) -> None:
    """Draw each matched topic's top words per released period (rows: topics; columns: periods) to ``path``
    (written atomically; needs matplotlib: ``pip install "topicdp[plots]"``)."""
    from matplotlib.figure import Figure  # no pyplot: no global state of the caller changed

    periods = [p for p in result.periods if p in result.releases]
    words = result.top_words(n_words)
    k = len(next(iter(words.values()))) if words else 0
    fig = Figure(figsize=(2.0 + 1.9 * len(periods), 0.9 + 0.55 * k))
    ax = fig.subplots()
    ax.set(xlim=(-0.5, len(periods) - 0.5), ylim=(k - 0.5, -0.5))
    for j, p in enumerate(periods):
        for i, topic in enumerate(words[p]):
            same = j > 0 and topic[0] == words[periods[j - 1]][i][0]
            ax.text(j, i, "\n".join([" ".join(topic[:2]), " ".join(topic[2:])]), ha="center", va="center",
                    fontsize=7, color="0.35" if same else "black")
    ax.set_xticks(range(len(periods)), periods)
    ax.set_yticks(range(k), [f"topic {i}" for i in range(k)])
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    eps_p, delta_p, _ = result.budget
    refused = [p for p in result.periods if p in result.refused]
    ax.set_title(f"top words of each released topic over time, matched across periods (each period "
                 f"({eps_p:.3g}, {delta_p:.2g})-DP)" + (f"; refused: {', '.join(refused)}" if refused else ""),
                 fontsize=8)
    fig.tight_layout()
    with atomic_path(path, overwrite=overwrite) as tmp:
        fig.savefig(tmp, dpi=120)


def period_file(out: Optional[str], period: str) -> Optional[str]:
    """The file a period's release is written to: ``r.json`` -> ``r.2004-05.json`` (None for None)."""
    if out is None:
        return None
    stem, suffix = os.path.splitext(out)
    return f"{stem}.{period}{suffix}"


def over_time_html(result: OverTimeResult, path: str, *, n_words: int = 8, overwrite: bool = True) -> str:
    """The interactive view of a series (:mod:`topicdp.view`'s page, a period selector, the topics in the matched
    order, the refusals and a table of top ``n_words`` words per period) written to ``path``; returns the HTML.
    Built from the published releases, the refusals and the stated budget only (never ``diagnostics``), so it is
    post-processing. ValueError when no period was released."""
    from .._view_page import series_page_html

    published = {p: matched_published(result, p) for p in result.periods if p in result.releases}
    return series_page_html(result.periods, published, result.refused, series_headline(result), path,
                            table_words=n_words, overwrite=overwrite)


def matched_published(result: OverTimeResult, period: str) -> dict:
    """The period's published dict (``release.to_dict()``) with its topics in the matched order (``result.order``):
    topic k is the k-th matched topic in every period. A reordering of published rows: post-processing."""
    data = result.releases[period].to_dict()  # type: ignore[attr-defined]
    order = [int(i) for i in result.order[period]]
    for key in ("topic_word", "top_words", "noisy"):
        if key in data:
            data[key] = [data[key][i] for i in order]
    alpha = (data.get("extra") or {}).get("alpha")
    if isinstance(alpha, list) and len(alpha) == len(order):
        data["extra"] = {**data["extra"], "alpha": [alpha[i] for i in order]}
    return data


def series_headline(result: OverTimeResult) -> List[str]:
    """The lines a series' page opens on: the guarantee of the series as a whole, how its periods compose, and
    the dataset's ledger line of the last released period (published in its report)."""
    epsilon, delta = result.total
    n = len(result.periods)
    lines = [f"series guarantee: ({epsilon:g}, {delta:g})-DP for each {result.unit}, {result.neighbours} neighbours, "
             f"for the {n} period(s) together", f"how the periods compose: {result.budget[2]}"]
    released = [p for p in result.periods if p in result.releases]
    if released:
        ledger = result.releases[released[-1]].report.details.get("ledger", {})  # type: ignore[attr-defined]
        if ledger.get("line"):
            lines.append(" ".join(str(ledger["line"]).split()))
    return lines


def show_over_time(result: OverTimeResult, *, top: int = 10, out: Optional[str] = None, plot: Optional[str] = None,
                   html: Optional[str] = None, overwrite: bool = False, echo: Callable[[str], None] = print) -> None:
    """Print each period's matched topics (or its refusal) and the dataset's total; write each release to ``out``
    (:func:`period_file`), the picture to ``plot`` and the page of :func:`over_time_html` to ``html``."""
    words = result.top_words(top)
    for p in result.periods:
        if p in result.refused:
            echo(f"\n{p}: refused ({result.refused[p]})")
            continue
        echo(f"\n{p}: {result.releases[p].report.headline().split(maxsplit=1)[1]}")  # type: ignore[attr-defined]
        for i, topic in enumerate(words[p]):
            echo(f"  {i:>2}  {' '.join(topic)}")
    if result.releases:
        last = list(result.releases.values())[-1]
        echo("\n" + last.report.details.get("ledger", {}).get("line", ""))  # type: ignore[attr-defined]
    if out:
        for p, r in result.releases.items():
            r.save(period_file(out, p), overwrite=overwrite)  # type: ignore[attr-defined]
        echo(f"releases written to {period_file(out, '<period>')} (published part only)")
    if plot:
        plot_over_time(result, plot, overwrite=overwrite)
        echo(f"topics over time drawn to {plot}")
    if html and result.releases:
        over_time_html(result, html, overwrite=overwrite)
        echo(f"topics over time written to {html} (published part only; open it in a browser)")
