"""The file behind a persisted :class:`~topicdp.rdp.PrivacyLedger`: one per dataset, across runs and processes.

:meth:`PrivacyLedger.open(path) <topicdp.rdp.PrivacyLedger.open>` returns the one ledger class, its entries
read from ``path``; this module is its storage. A ledger file holds the budget, the privacy unit and the
neighbour relation, and every spend as the entries the ledger composes in memory (Gaussian, Laplace, ...),
so that totals across runs are exactly as tight as within one run.

Format
------
JSON Lines (UTF-8), one record per line, each with ``"prev"`` (the previous line's hash; ``""`` on the first)
and ``"hash"``, the SHA-256 of ``prev`` followed by the record's canonical JSON (sorted keys, no spaces,
without ``"hash"``): a hash chain. The first line is the header (format, budget, unit, neighbours, accounting,
creation date). Every later line is

``planned``
    A run's entries, written and flushed to disk *before* the run reads private data or draws noise, with its
    date, stated guarantee, mechanism, corpus and output file. A later ``planned`` line of the same run
    supersedes it (the run chose another mechanism: re-checked against the budget before its noise).
``completed``
    The entries the run actually drew (fewer when it stopped early) and its status. Until this line exists
    the run's planned entries stay counted, so a crash or ``kill -9`` between the two never under-counts.

A sidecar ``<path>.head`` holds the number of lines and the last hash (rewritten atomically after each
append; a new ledger's is written before the ledger itself, so a ledger never exists without one): a file that
lost whole lines at its end still has a valid chain, and the head is what catches it. A ledger whose head is
missing is therefore refused until its owner re-seals it (:meth:`LedgerFile.reseal`, ``topicdp ledger reseal``):
the chain is verified and a new head written, on the owner's word that no line was cut from the end.
``<path>.lock`` is the lock file (never removed: removing a lock file races with its next user).

One file, whatever its name
---------------------------
The budget belongs to the dataset, not to a path. The path is resolved once (symbolic links followed,
``os.path.realpath``) and the file it names is the one read, replaced, sealed (``.head``) and locked (``.lock``):
a run through a symbolic link and a run through the real path share one chain and one lock, and the link stays
a link. A hard link cannot be followed that way (each write is an atomic rename, which gives one name a new
file and leaves the other names on the old one: the ledger would fork at its next spend), so a ledger file
with more than one hard link is refused.

Atomicity and locking
---------------------
An append takes an exclusive ``fcntl.flock`` on the lock file, re-reads and verifies the file, checks the new
entries against the budget, and replaces the file whole (a temporary in the same directory, ``fsync``, an
atomic ``rename``, ``fsync`` of the directory; :func:`topicdp._files.atomic_path`): a reader sees the old file
or the new one, and two runs at once cannot both pass the check with the budget for one. ``flock`` is
advisory and per open file: it orders processes that use it (every topicdp run does) on one machine. On a
network file system it is not reliable: NFS emulates ``flock`` with byte-range locks on the server (Linux
since 2.6.12), which holds only where every client and the server implement NFS locking (lockd/NLM, or NFSv4)
and fails silently where one mounts with ``nolock`` or ``local_lock``; SMB/CIFS and FUSE file systems vary.
Put a ledger on a local disk, or run every release from one machine; there is no lease, so a client that loses
the server while holding the lock may not hold it any more.

What it is, and is not
----------------------
The owner's own record of what was released from one dataset, protected against accidents: a crash, two runs
at once, a truncated or edited file (refused, never trusted). It is not a defence against the owner, who can
delete the file, start a new one, or rewrite the whole chain; nor does it know about releases made without it.
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
from typing import TYPE_CHECKING, Any, Iterator, List, Optional, Sequence, Tuple

from .._files import atomic_write
from .partitions import worst_combination

if TYPE_CHECKING:  # (the ledger module imports this one: its classes are named here, never imported)
    Entry = Any
    PrivacyLedger = Any

FORMAT = "topicdp-ledger/1"
#: entry kind -> its class (:mod:`topicdp.rdp.ledger` registers them: :func:`register_kinds`)
_KINDS: dict = {}


def register_kinds(*classes: type) -> None:
    """Make the entry classes known to :func:`entry_from_json` (by their ``kind``)."""
    for cls in classes:
        _KINDS[cls.kind] = cls  # type: ignore[attr-defined]


class LedgerFileError(ValueError):
    """A ledger file that cannot be trusted (corrupted, truncated, not a ledger) or that does not fit the run
    (another unit or neighbour relation)."""


@dataclass(frozen=True)
class LedgerOptions:
    """Where a release is charged: the ledger file, and the release's output file (recorded with the run).

    Parameters
    ----------
    path : str
        An existing ledger file (``topicdp ledger create``, or :meth:`topicdp.rdp.PrivacyLedger.open`).
    output : str, optional
        The release's output file, as the ledger lists it.
    partition : str, optional
        The disjoint part of the dataset the release reads (a period of documents, e.g. ``"2004-05"``): its entries
        compose in parallel with other parts' of the same ``partitioning`` (document level, add/remove neighbours;
        :mod:`topicdp.rdp.ledger`).
    partitioning : str, optional
        The function that split the dataset into the parts (:func:`topicdp.rdp.partitions.partitioning_key`: the
        corpus's digest, the period kind and the date field). Without it a partition is a legacy one, sequential
        with every other label.
    """

    path: str
    output: Optional[str] = None
    partition: Optional[str] = None
    partitioning: Optional[str] = None

    def partition_labels(self) -> dict:
        """The labels the run's entries (and its record) carry: ``partition`` and ``partitioning`` when given."""
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
    """A dp-accounting event (an attrs class of ``dp_accounting.dp_event``) as nested JSON."""
    import attr

    if isinstance(event, (list, tuple)):
        return [_event_to_json(e) for e in event]
    if attr.has(type(event)):
        out = {"__event__": type(event).__name__}
        for f in attr.fields(type(event)):
            out[f.name] = _event_to_json(getattr(event, f.name))
        return out
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


def entry_to_json(entry: "Entry") -> dict:
    """A ledger entry as a JSON object: ``kind``, its parameters and the labels it states."""
    out: dict = {}
    for f in fields(entry):
        value = getattr(entry, f.name)
        if f.kw_only and value is None:
            continue
        out[f.name] = _event_to_json(value) if f.name == "event" else value
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
    def budget(self) -> Tuple[float, float]:
        return float(self.header["budget"][0]), float(self.header["budget"][1])

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
    """Read and verify ``path``: its hash chain, and that its head (``<path>.head``) is there and agrees.

    ``path`` is read as given: :class:`LedgerFile` resolves it first. A ledger whose head is missing is refused
    (the chain alone cannot tell a file cut at a line boundary from a whole one) unless ``require_head`` is
    False, which only :meth:`LedgerFile.reseal` passes. A file with more than one hard link is refused too
    (:func:`check_single_name`). Raises :class:`LedgerFileError` for a file that cannot be trusted.
    """
    # the head before the file: a writer replaces the file, then its head, so a head read first never names a line
    # the file read after it lacks (read after the file, it could be the next append's, and refuse a whole file)
    head = _read_head(path)
    try:
        with open(path, "rb") as fh:
            n_links = os.fstat(fh.fileno()).st_nlink
            raw = fh.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"ledger: no such file: {path} (create it with `topicdp ledger create`, or "
                                "PrivacyLedger.open(path, budget=..., unit=..., neighbours=...))") from None
    check_single_name(path, n_links)
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


def check_single_name(path: str, n_links: int) -> None:
    """Refuse a ledger file with more than one hard link: every write replaces the file by an atomic rename,
    which moves one name to the new file and leaves the others on the old one, so a second name would fork the
    ledger at its next write (each copy missing the other's spends)."""
    if n_links > 1:
        raise LedgerFileError(
            f"ledger {path} has {n_links} hard links (names of one file); refused: each write replaces the file "
            "by an atomic rename, which a hard link does not follow, so the names would become two ledgers at "
            "the next spend, each missing the other's. Remove the other names (`find / -samefile "
            f"{path}` lists them) and keep one; a symbolic link may name the ledger anywhere")


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
    """Write the whole chain atomically, and its head: after the chain (an append: a crash between leaves a head
    one line behind, which the next read accepts), or before it (``head_first``, a new ledger: a crash between
    leaves a head and no ledger, which the next create replaces; never a ledger without a head)."""
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
        #: the name the ledger was given, and the one file it names (symbolic links resolved, once): the file
        #: read, replaced and locked whatever name a run uses, so two names of a ledger are one ledger
        self.name = os.fspath(path)
        self.path = os.path.realpath(self.name)
        self._locked = False

    @classmethod
    def create(cls, path: str, budget: Tuple[float, float], unit: str, neighbours: str,
               accounting: str = "best") -> "LedgerFile":
        """A new ledger at ``path`` (refuses an existing file: a ledger is never replaced by a fresh one)."""
        from .._names import NEIGHBOURS, UNITS
        from .._validation import check_delta, check_epsilon, check_option

        if not isinstance(budget, (tuple, list)) or len(budget) != 2:
            raise ValueError(f"budget must be a pair (epsilon, delta), got {budget!r}")
        header = {"type": "header", "format": FORMAT, "created": _now(),
                  "budget": [check_epsilon(budget[0]), check_delta(budget[1])],
                  "unit": check_option(unit, "unit", UNITS), "neighbours": check_option(neighbours, "neighbours",
                                                                                        NEIGHBOURS),
                  "accounting": check_option(accounting, "accounting", ("rdp", "simple", "exact", "best"))}
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
        """Write a new head for a ledger whose head file is missing, after verifying its chain.

        The head is what catches a ledger cut at a line boundary (whole runs removed from its end, which leaves a
        valid chain), so a ledger without one is refused. Resealing is the owner's statement that the file is
        whole: it checks every line's hash, but cannot know whether lines were cut from the end. A head that is
        present is never replaced: one that agrees with the file leaves nothing to do, one that does not is
        refused as :meth:`state` refuses it (delete it first only if you know why it disagrees).

        Returns
        -------
        bool
            True when a head was written, False when the ledger had a head that agrees with it.

        Raises
        ------
        LedgerFileError
            The chain does not verify, or the head present disagrees with the file.
        """
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
        """Check ``entries`` against what is left and write them as a run's plan, durably; return the run id.

        Under the lock: re-read the file, compose every other run's entries with these (a run given by ``run``
        re-plans: its earlier plan is replaced), refuse with the ledger's :class:`~topicdp.rdp.BudgetExceededError`
        when they do not fit (its message: spent, planned and the budget, by exact and basic composition; its
        ``basic`` attribute: the basic figures), else append a ``planned`` line. ``guarantee`` is the run's own
        stated guarantee (``{"epsilon": .., "delta": ..}``, and ``"gamma"`` for random DP; basic composition adds
        them up);
        ``info`` (mechanism, corpus, output, ...) is stored as given (JSON values).
        """
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
        """Write the entries run ``run`` drew (all of them: those recorded and those checked before their noise)
        and its status; from then on they, not its plan, count."""
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
        """Plan and complete ``entries`` under one lock (after the release: prefer :meth:`reserve` before the
        noise and :meth:`complete` after it, which a crash in between cannot under-count)."""
        entries = list(entries)
        with self.locked():
            run = self.reserve(ledger, entries, **info)
            self.complete(ledger, run, entries)

    # -- reading -------------------------------------------------------------------------------------------

    def summary(self, ledger_class: type) -> dict:
        """What ``topicdp ledger show`` prints, as JSON: budget, spent (exact and basic), remaining, runs
        (``ledger_class``: :class:`~topicdp.rdp.PrivacyLedger`, which composes the entries)."""
        state = self.state()
        eps_b, delta_b = state.budget
        ledger = ledger_class(budget=state.budget, accounting=state.header["accounting"])
        ledger._entries = state.effective()
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
    alone = type(ledger)()
    alone._entries = list(entries)
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
    """Basic composition (Dwork & Roth 2014, Thm. 3.16) of the runs' own stated guarantees: the sums, with runs of
    disjoint parts of one partitioning in parallel and partitionings in sequence (the ledger's one rule,
    :func:`topicdp.rdp.partitions.worst_combination`: the largest sum over every combination of one part per
    partitioning; McSherry 2009, Thm. 4). Epsilon and delta are each the largest over the combinations."""
    def total(which: str) -> float:
        def cost(rs: List[dict]) -> float:
            return float(sum(_guarantee(r).get(which, 0.0) for r in rs))

        def bound(common: List[dict], groups: List[List[List[dict]]]) -> float:  # sums: the worst part of each
            return cost(common) + sum(max(cost(part) for part in parts) for parts in groups)

        return worst_combination(list(runs), _run_partition, cost, signature=lambda r: _guarantee(r).get(which, 0.0),
                                 bound=bound)

    return {"epsilon": total("epsilon"), "delta": total("delta")}


def _run_partition(run: dict) -> Optional[Tuple[Any, str]]:
    """A run's ``(partitioning, part)`` as the ledger keys entries (:func:`topicdp.rdp.ledger.partition_of`), or
    None: a run with a partition and no partitioning (a legacy record) is its own partitioning."""
    rec = run["completed"] or run["planned"]
    part, partitioning = rec.get("partition"), rec.get("partitioning")
    if part is None:
        return None
    return (("partitioning", partitioning) if partitioning is not None else ("legacy", part)), part


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
    """How a run's part composes, for ``ledger show``: its label and the number of its partitioning (parts of one
    compose in parallel, partitionings sequentially), or that a legacy label is sequential with every other label.
    The corpus digest in a partitioning's key is a fingerprint of private data: it stays in the file."""
    part, key = rec["partition"], rec.get("partitioning")
    if key is None:
        return f"{part} (legacy label: sequential with every other label)"
    number = numbers.setdefault(key, len(numbers) + 1)
    try:
        how = json.loads(key)
        return f"{part} of partitioning {number} ({how['period']}s by {how['date_field']!r} of one corpus file)"
    except (ValueError, KeyError, TypeError):
        return f"{part} of partitioning {number}"


def refusal_message(path: str, spent: float, requested: float, total: float, basic: dict,
                    budget: Tuple[float, float], n_runs: int) -> str:
    """What a refused run is told: spent so far, this run's plan and the budget, by exact and basic composition."""
    eps_b, delta_b = budget
    runs = f"{n_runs} run" + ("" if n_runs == 1 else "s") + " (completed, or planned and counted)"
    return (f"the ledger {path} has no room for this run: by exact composition (the ledger's accounting, at delta="
            f"{delta_b:g}) {runs} spent {spent:.4g}, this run plans {requested:.4g}, together {total:.4g}, over the "
            f"budget epsilon={eps_b:g}; by basic composition (the runs' own guarantees added up) {basic['spent']:.4g}"
            f" + {basic['requested']:.4g} = {basic['total']:.4g} at delta={basic['delta']:.3g}. Nothing was read or "
            "spent")


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
    except LedgerFileError:
        raise
    except ValueError as exc:
        if not hasattr(exc, "total"):  # not a BudgetExceededError: labels, deltas
            raise
        runs = {k: r for k, r in state.runs().items() if k != exclude and _guarantee(r).get("gamma") is None}
        mine = guarantee if guarantee is not None else _guarantee_of(ledger, entries)
        before = basic(list(runs.values()))
        b = {"spent": before["epsilon"], "requested": mine.get("epsilon", 0.0),
             "total": before["epsilon"] + mine.get("epsilon", 0.0), "delta": before["delta"] + mine.get("delta", 0.0)}
        # the ledger's own BudgetExceededError (spent, requested, total, budget), told the figures of the file
        exc.basic = b  # type: ignore[attr-defined]
        exc.args = (refusal_message(state.path, exc.spent, exc.requested, exc.total, b,  # type: ignore[attr-defined]
                                    state.budget, len(runs)),)
        raise
