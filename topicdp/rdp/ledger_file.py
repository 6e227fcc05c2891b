"""The file behind a persisted :class:`~topicdp.rdp.PrivacyLedger`: one per dataset, across runs and processes.

JSON Lines in a SHA-256 hash chain: a header (budget, unit, neighbours, accounting), then each run's ``planned``
entries, written durably *before* it reads private data or draws noise, and its ``completed`` entries after (until
then the plan counts, so a crash never under-counts). ``<path>.head`` (line count, last hash) catches a file cut at
a line boundary; a ledger without one is refused until resealed, as is a file with several hard links (an atomic
rename would fork it; the path is resolved once, symbolic links followed). Appends hold ``fcntl.flock`` on
``<path>.lock`` (one machine only, not reliably over network file systems), re-read, check the budget and replace
the file atomically: the owner's record against accidents, not a defence against the owner.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import math
import os
import socket
import uuid
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from .._files import atomic_write
from .._names import NEIGHBOURS, UNITS
from .._validation import check_delta, check_epsilon, check_option
from .partitions import part_key, worst_combination, worst_sum

if TYPE_CHECKING:  # (the ledger module imports this one: its classes are named here, never imported)
    Entry = Any
    PrivacyLedger = Any

FORMAT = "topicdp-ledger/1"
LEDGER_METHODS = ("rdp", "simple", "exact", "best")
#: entry kind -> its class (:mod:`topicdp.rdp.ledger` registers them: :func:`register_kinds`)
_KINDS: dict = {}


def register_kinds(*classes: type) -> None:
    """Make the entry classes known to :func:`entry_from_json` (by their ``kind``)."""
    for cls in classes:
        _KINDS[cls.kind] = cls  # type: ignore[attr-defined]


class Budget(NamedTuple):
    """(epsilon, delta): a ledger's total, a request's, or one step's share; any pair is accepted as one."""

    epsilon: float
    delta: float

    def __str__(self) -> str:
        return f"epsilon={self.epsilon:g}, delta={self.delta:g}"

    @classmethod
    def of(cls, value) -> "Budget":
        """``value`` (a Budget or an (epsilon, delta) pair) as a checked Budget."""
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise ValueError(f"budget must be a pair (epsilon, delta), got {value!r}")
        return cls(check_epsilon(value[0]), check_delta(value[1]))


class LedgerFileError(ValueError):
    """A ledger file that cannot be trusted (corrupted, truncated, not a ledger) or that does not fit the run
    (another unit or neighbour relation)."""


@dataclass(frozen=True)
class LedgerOptions:
    """Where a release is charged: an existing ledger file, the release's output file (listed with the run), and
    the part of the dataset it reads with the partitioning that made it (:func:`~topicdp.rdp.partitions.
    partitioning_key`; parts of one partitioning compose in parallel, :mod:`topicdp.rdp.ledger`)."""

    path: str
    output: Optional[str] = None
    partition: Optional[str] = None
    partitioning: Optional[str] = None

    def partition_labels(self) -> dict:
        """The ``partition`` and ``partitioning`` labels, when given."""
        return {k: v for k, v in (("partition", self.partition), ("partitioning", self.partitioning))
                if v is not None}

    def __post_init__(self) -> None:
        if not isinstance(self.path, str) or not self.path:
            raise TypeError(f"ledger must be a non-empty path, got {self.path!r}")
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"ledger: no such file: {self.path} (create it first: topicdp ledger create "
                                    f"{self.path} --epsilon E --delta D --unit U --neighbours N)")
        if self.partitioning is not None and self.partition is None:
            raise ValueError(f"partitioning {self.partitioning!r} is given without the partition it splits into "
                             "(partition=...)")


# -- entries as JSON ----------------------------------------------------------------------------------------

def _event_to_json(event) -> Any:
    """A dp-accounting event (an attrs class) as nested JSON."""
    import attr

    if isinstance(event, (list, tuple)):
        return [_event_to_json(e) for e in event]
    if attr.has(type(event)):
        fields_ = {f.name: _event_to_json(getattr(event, f.name)) for f in attr.fields(type(event))}
        return {"__event__": type(event).__name__, **fields_}
    return event


def _event_from_json(data: Any) -> Any:
    from dp_accounting import dp_event

    if isinstance(data, list):
        return [_event_from_json(e) for e in data]
    if isinstance(data, dict) and "__event__" in data:
        cls = getattr(dp_event, str(data["__event__"]), None)
        if cls is None or not isinstance(cls, type) or not issubclass(cls, dp_event.DpEvent):
            raise LedgerFileError(f"unknown dp-accounting event {data['__event__']!r}")
        return cls(**{k: _event_from_json(v) for k, v in data.items() if k != "__event__"})
    return data


def entry_to_json(entry: "Entry", event=None) -> dict:
    """A ledger entry as a JSON object: ``kind``, its parameters and the labels it states (a dp-accounting event
    by ``event``, default nested JSON)."""
    out: dict = {}
    for f in fields(entry):
        value = getattr(entry, f.name)
        if f.kw_only and value is None:
            continue
        out[f.name] = (event or _event_to_json)(value) if f.name == "event" else value
    return out


def entry_from_json(data: dict) -> "Entry":
    """The entry :func:`entry_to_json` wrote (validated by the entry's own constructor)."""
    data = dict(data)
    cls = _KINDS.get(data.get("kind"))
    if cls is None:
        raise LedgerFileError(f"unknown entry kind {data.get('kind')!r}")
    if "event" in data:
        data["event"] = _event_from_json(data["event"])
    return cls(**data)


# -- the chain -------------------------------------------------------------------------------------------

def _canonical(record: dict) -> str:
    return json.dumps({k: v for k, v in record.items() if k != "hash"}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True, allow_nan=False)


def _hash(prev: str, record: dict) -> str:
    return hashlib.sha256((prev + _canonical(record)).encode("utf-8")).hexdigest()


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class LedgerState:
    """A verified ledger file: its header and records, in order."""

    path: str
    header: dict
    records: List[dict] = field(default_factory=list)

    @property
    def budget(self) -> Budget:
        return Budget(float(self.header["budget"][0]), float(self.header["budget"][1]))

    def runs(self) -> "dict[str, dict]":
        """Run id -> ``{"planned": last planned record, "completed": record or None}``, in order of first plan."""
        runs: dict[str, dict] = {}
        for rec in self.records:
            run = runs.setdefault(rec["run"], {"planned": None, "completed": None})
            run[rec["type"]] = rec
        return runs

    def effective(self, exclude: Optional[str] = None) -> "List[Entry]":
        """The entries every run counts for: its completed entries, or its planned ones until it completes."""
        out: List[Entry] = []
        for run_id, run in self.runs().items():
            if run_id == exclude:
                continue
            rec = run["completed"] or run["planned"]
            out.extend(entry_from_json(e) for e in rec["entries"])
        return out


def read_state(path: str, *, require_head: bool = True) -> LedgerState:
    """Read and verify ``path`` (as given): its hash chain, a single hard link, and its head (unless
    ``require_head`` is False, for :meth:`LedgerFile.reseal`); :class:`LedgerFileError` otherwise."""
    # the head before the file: a writer replaces the file, then its head, so a head read first never names a line
    # the file read after it lacks
    head = _read_head(path)
    try:
        with open(path, "rb") as fh:
            n_links = os.fstat(fh.fileno()).st_nlink
            raw = fh.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"ledger: no such file: {path} (create it with `topicdp ledger create`, or "
                                "PrivacyLedger.open(path, budget=..., unit=..., neighbours=...))") from None
    if n_links > 1:  # refused: an atomic rename would fork it
        raise LedgerFileError(
            f"ledger {path} has {n_links} hard links (names of one file); refused: each write replaces the file "
            "by an atomic rename, which a hard link does not follow, so the names would become two ledgers at "
            "the next spend, each missing the other's. Remove the other names (`find / -samefile "
            f"{path}` lists them) and keep one; a symbolic link may name the ledger anywhere")
    if not raw:
        raise LedgerFileError(f"ledger {path}: the file is empty (truncated?); refused")
    if not raw.endswith(b"\n"):
        raise LedgerFileError(f"ledger {path}: the last line is incomplete (a truncated file); refused")
    prev, records = "", []
    for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), start=1):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            raise LedgerFileError(f"ledger {path}: line {number} is not JSON (corrupted); refused") from None
        if not isinstance(rec, dict) or rec.get("prev") != prev or rec.get("hash") != _hash(prev, rec):
            raise LedgerFileError(f"ledger {path}: line {number} does not continue the hash chain (the file was "
                                  "altered or truncated); refused")
        prev = rec["hash"]
        records.append(rec)
    header = records[0]
    if header.get("type") != "header" or header.get("format") != FORMAT:
        raise LedgerFileError(f"ledger {path}: not a topicdp ledger (format {header.get('format')!r}); refused")
    if head is None and require_head:
        raise LedgerFileError(
            f"ledger {path}: its head file {path}.head is missing, so lines cut from the end of the ledger "
            "(whole runs) cannot be detected; refused. If you know the file is whole (restored from a backup "
            f"that lost the head, say), re-seal it: `topicdp ledger reseal {path}` (Python: "
            "LedgerFile(path).reseal()), which writes a new head after verifying the chain")
    if head is not None:
        n, last = head
        if n < 1 or n > len(records) or records[n - 1]["hash"] != last:
            raise LedgerFileError(f"ledger {path}: it ends at line {len(records)} but its head file "
                                  f"{path}.head names line {n} (lines were removed, or the file replaced); refused")
    return LedgerState(path, header, records[1:])


def _read_head(path: str) -> Optional[Tuple[int, str]]:
    try:
        with open(path + ".head", encoding="utf-8") as fh:
            n, last = fh.read().split()
        return int(n), last
    except FileNotFoundError:
        return None
    except ValueError:
        raise LedgerFileError(f"ledger {path}: its head file {path}.head is corrupted; refused") from None


def _chain(state_records: Sequence[dict]) -> Tuple[List[str], str]:
    """The records as chained JSON lines, and the last hash."""
    prev, lines = "", []
    for rec in state_records:
        rec = {**{k: v for k, v in rec.items() if k not in ("prev", "hash")}, "prev": prev}
        rec["hash"] = _hash(prev, rec)
        prev = rec["hash"]
        lines.append(json.dumps(rec, sort_keys=True, separators=(",", ":"), allow_nan=False))
    return lines, prev


def _write_head(path: str, n_lines: int, last: str) -> None:
    atomic_write(path + ".head", f"{n_lines} {last}\n")


def _write(path: str, state_records: Sequence[dict], *, head_first: bool = False) -> None:
    """Write the whole chain atomically, and its head after it (an append) or before it (``head_first``, a new
    ledger: never a ledger without a head)."""
    lines, last = _chain(state_records)
    if head_first:
        _write_head(path, len(lines), last)
    atomic_write(path, "\n".join(lines) + "\n")
    if not head_first:
        _write_head(path, len(lines), last)


# -- the file ------------------------------------------------------------------------------------------------

class LedgerFile:
    """The storage of a persisted :class:`~topicdp.rdp.PrivacyLedger` (see the module docstring)."""

    def __init__(self, path: str) -> None:
        #: the name given, and the one file it names (symbolic links resolved once)
        self.name = os.fspath(path)
        self.path = os.path.realpath(self.name)
        self._locked = False

    @classmethod
    def create(cls, path: str, budget: Tuple[float, float], unit: str, neighbours: str,
               accounting: str = "best") -> "LedgerFile":
        """A new ledger at ``path`` (refuses an existing file: a ledger is never replaced by a fresh one)."""
        header = {"type": "header", "format": FORMAT, "created": _now(), "budget": list(Budget.of(budget)),
                  "unit": check_option(unit, "unit", UNITS),
                  "neighbours": check_option(neighbours, "neighbours", NEIGHBOURS),
                  "accounting": check_option(accounting, "accounting", LEDGER_METHODS)}
        self = cls(path)
        with self.locked():
            if os.path.exists(self.path):
                raise FileExistsError(f"ledger {self.path} exists; a ledger is never replaced by a fresh one (open "
                                      "it, or name another file)")
            _write(self.path, [header], head_first=True)
        return self

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the exclusive lock of this ledger (re-entrant within one object)."""
        import fcntl

        if self._locked:
            yield
            return
        fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._locked = True
            try:
                yield
            finally:
                self._locked = False
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def state(self) -> LedgerState:
        return read_state(self.path)

    def reseal(self) -> bool:
        """Write a new head for a ledger whose head is missing, after verifying its chain (the owner's word that no
        line was cut from the end). A present head is never replaced. Returns whether a head was written."""
        with self.locked():
            if os.path.lexists(self.path + ".head"):
                read_state(self.path)
                return False
            state = read_state(self.path, require_head=False)
            last = state.records[-1] if state.records else state.header
            _write_head(self.path, 1 + len(state.records), last["hash"])
        return True

    def refresh(self, ledger: "PrivacyLedger", exclude: Optional[str] = None) -> LedgerState:
        """Load the file's entries into ``ledger`` (every run's, but ``exclude``'s); return the state."""
        state = self.state()
        ledger._entries = state.effective(exclude)
        return state

    def _append(self, state: LedgerState, records: Sequence[dict]) -> None:
        assert self._locked, "append under the lock"
        _write(self.path, [state.header, *state.records, *records])

    # -- spending ------------------------------------------------------------------------------------------

    def reserve(self, ledger: "PrivacyLedger", entries: "Sequence[Entry]", *, run: Optional[str] = None,
                guarantee: Optional[dict] = None, **info: Any) -> str:
        """Under the lock, check ``entries`` against every other run's and write them as a run's plan; return the
        run id. ``run`` re-plans an existing run; a refusal is the ledger's :class:`~topicdp.rdp.BudgetExceededError`
        with the exact and basic figures (``basic``). ``guarantee``: the run's stated (epsilon, delta[, gamma]);
        ``info`` (mechanism, corpus, output, ...) is stored as given."""
        entries = list(entries)
        with self.locked():
            state = self.refresh(ledger, exclude=run)
            _check_fits(ledger, state, entries, guarantee, exclude=run)
            run_id = run or uuid.uuid4().hex[:12]
            planned = state.runs().get(run_id, {}).get("planned") or {}
            rec = {"type": "planned", "run": run_id, "date": _now(), "host": socket.gethostname(),
                   "pid": os.getpid(), "entries": [entry_to_json(e) for e in entries],
                   "guarantee": guarantee if guarantee is not None else planned.get("guarantee")
                   or _guarantee_of(ledger, entries),
                   **{k: planned[k] for k in planned if k not in _OWN_KEYS}, **info}
            self._append(state, [rec])
            ledger._entries = state.effective(exclude=run_id) + entries
        return run_id

    def complete(self, ledger: "PrivacyLedger", run: str, entries: "Sequence[Entry]", *, status: str = "released",
                 **info: Any) -> None:
        """Write the entries run ``run`` drew and its status; from then on they, not its plan, count."""
        entries = list(entries)
        with self.locked():
            state = self.state()
            planned = state.runs().get(run, {}).get("planned")
            if planned is None:
                raise LedgerFileError(f"ledger {self.path}: no planned run {run!r} to complete")
            rec = {**{k: planned[k] for k in planned if k not in _OWN_KEYS}, "type": "completed", "run": run,
                   "date": _now(), "entries": [entry_to_json(e) for e in entries], "status": status, **info}
            self._append(state, [rec])
            ledger._entries = state.effective(exclude=run) + entries

    def record(self, ledger: "PrivacyLedger", entries: "Sequence[Entry]", **info: Any) -> None:
        """Plan and complete ``entries`` under one lock (:meth:`reserve` before the noise is safer)."""
        entries = list(entries)
        with self.locked():
            run = self.reserve(ledger, entries, **info)
            self.complete(ledger, run, entries)

    # -- reading -------------------------------------------------------------------------------------------

    def summary(self, ledger_class: type) -> dict:
        """What ``topicdp ledger show`` prints (JSON): budget, spent (exact and basic), remaining, runs."""
        state = self.state()
        eps_b, delta_b = state.budget
        ledger = ledger_class(budget=state.budget, accounting=state.header["accounting"], _entries=state.effective())
        runs = state.runs()
        out: dict = {"file": self.path, "budget": {"epsilon": eps_b, "delta": delta_b},
                     "unit": state.header["unit"], "neighbours": state.header["neighbours"],
                     "accounting": state.header["accounting"], "created": state.header["created"]}
        dp_runs = [r for r in runs.values() if _guarantee(r).get("gamma") is None]
        random_runs = [r for r in runs.values() if _guarantee(r).get("gamma") is not None]
        out["dp"] = {"spent": spent(ledger, delta_b, "dp"), "basic": basic(dp_runs), "remaining": ledger.remaining(),
                     "n_runs": len(dp_runs)}
        if random_runs:
            out["random_dp"] = {"spent_all": spent(ledger, delta_b, "all"), "gamma": ledger.gamma,
                                "basic": basic(random_runs), "n_runs": len(random_runs),
                                "note": "random DP, NOT DP: never counted in the DP budget; the total over all "
                                        "releases holds with probability at least 1 - gamma over P's pairs"}
        numbers: dict = {}  # partitioning -> its number in ledger show (its corpus digest is never printed)
        out["runs"] = [_run_line(run_id, r, numbers) for run_id, r in runs.items()]
        return out


#: keys a planned record sets for itself (not carried over to the run's later records)
_OWN_KEYS = ("type", "run", "date", "entries", "prev", "hash", "status")


def _guarantee(run: dict) -> dict:
    return (run["completed"] or run["planned"]).get("guarantee") or {}


def _guarantee_of(ledger: "PrivacyLedger", entries: "Sequence[Entry]") -> dict:
    """A run's stated guarantee when none is given: its entries' total at the budget's delta."""
    delta = ledger.budget[1] if ledger.budget is not None else 1e-6
    alone = type(ledger)(_entries=list(entries))
    gammas = [e.gamma for e in entries if e.gamma is not None]
    out = {"epsilon": alone.epsilon(delta, "best", scope="all") if entries else 0.0, "delta": delta}
    if gammas:
        out["gamma"] = min(1.0, float(sum(gammas)))
    return out


def spent(ledger: "PrivacyLedger", delta: float, scope: str) -> float:
    """The ledger's total (its accounting, ``"best"`` unless stated) over ``scope`` at ``delta``."""
    try:
        return ledger.epsilon(delta, ledger.accounting if ledger.accounting != "exact" else "best", scope=scope)
    except ValueError:
        return math.inf


def basic(runs: Sequence[dict]) -> dict:
    """Basic composition (Dwork & Roth 2014, Thm. 3.16) of the runs' stated guarantees, parts of one partitioning
    in parallel (:func:`~topicdp.rdp.partitions.worst_combination`); epsilon and delta each the worst."""
    def total(which: str) -> float:
        def cost(rs: List[dict]) -> float:
            return float(sum(_guarantee(r).get(which, 0.0) for r in rs))

        return worst_combination(list(runs), _run_partition, cost, signature=lambda r: _guarantee(r).get(which, 0.0),
                                 bound=lambda common, groups: worst_sum(common, groups, cost))

    return {"epsilon": total("epsilon"), "delta": total("delta")}


def _run_partition(run: dict) -> Optional[Tuple[Any, str]]:
    rec = run["completed"] or run["planned"]
    return part_key(rec.get("partition"), rec.get("partitioning"))


def _run_line(run_id: str, run: dict, numbers: dict) -> dict:
    rec = run["completed"] or run["planned"]
    g = rec.get("guarantee") or {}
    return {"run": run_id, "date": run["planned"]["date"], "status": rec.get("status", "planned (never completed: "
                                                                          "counted as planned)"),
            "guarantee": "random-DP" if g.get("gamma") is not None else "DP", "epsilon": g.get("epsilon"),
            "delta": g.get("delta"), "gamma": g.get("gamma"), "mechanism": rec.get("mechanism"),
            "corpus": rec.get("corpus"), "output": rec.get("output"), "entries": len(rec["entries"]),
            **({"partition": _partition_line(rec, numbers)} if rec.get("partition") is not None else {})}


def _partition_line(rec: dict, numbers: dict) -> str:
    """How a run's part composes, for ``ledger show`` (a partitioning by number: its corpus digest, a fingerprint
    of private data, stays in the file)."""
    part, key = rec["partition"], rec.get("partitioning")
    if key is None:
        return f"{part} (legacy label: sequential with every other label)"
    number = numbers.setdefault(key, len(numbers) + 1)
    try:
        how = json.loads(key)
        return f"{part} of partitioning {number} ({how['period']}s by {how['date_field']!r} of one corpus file)"
    except (ValueError, KeyError, TypeError):
        return f"{part} of partitioning {number}"


def basic_phrase(b: dict) -> str:
    """A refusal's figures by basic composition (``b``: a refusal's ``basic``)."""
    return (f"by basic composition (the runs' own guarantees added up) {b['spent']:.4g} + {b['requested']:.4g} = "
            f"{b['total']:.4g} at delta={b['delta']:.3g}")


def _check_fits(ledger: "PrivacyLedger", state: LedgerState, entries: "List[Entry]", guarantee: Optional[dict],
                exclude: Optional[str]) -> None:
    """Labels and budget of ``entries`` against the file's other runs (``ledger._entries``, refreshed)."""
    for e in entries:
        for attr in ("unit", "neighbours"):
            value = getattr(e, attr)
            if value is not None and value != state.header[attr]:
                raise LedgerFileError(
                    f"ledger {state.path} composes {state.header['unit']}-level releases under "
                    f"{state.header['neighbours']} neighbours; this run's {e.name!r} is {attr} {value!r} (keep "
                    "one ledger per unit and neighbour relation); nothing was read or spent")
    try:
        ledger.check(entries)
    except ValueError as exc:
        if not hasattr(exc, "total"):  # not a BudgetExceededError: labels, deltas, a LedgerFileError
            raise
        runs = {k: r for k, r in state.runs().items() if k != exclude and _guarantee(r).get("gamma") is None}
        mine = guarantee if guarantee is not None else _guarantee_of(ledger, entries)
        before = basic(list(runs.values()))
        b = {"spent": before["epsilon"], "requested": mine.get("epsilon", 0.0),
             "total": before["epsilon"] + mine.get("epsilon", 0.0), "delta": before["delta"] + mine.get("delta", 0.0)}
        exc.basic = b  # type: ignore[attr-defined]
        counted = f"{len(runs)} run" + ("" if len(runs) == 1 else "s") + " (completed, or planned and counted)"
        spent_eps, requested, total = exc.spent, exc.requested, exc.total  # type: ignore[attr-defined]
        exc.args = (f"the ledger {state.path} has no room for this run: by exact composition (the ledger's accounting, "
                    f"at delta={state.budget[1]:g}) {counted} spent {spent_eps:.4g}, this run plans {requested:.4g}, "
                    f"together {total:.4g}, over the budget epsilon={state.budget[0]:g}; {basic_phrase(b)}. Nothing "
                    "was read or spent",)
        raise
