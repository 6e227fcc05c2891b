"""The files a release writes and the scratch it leaves (the design's "files are part of the guarantee").

:func:`check_paths` refuses, before anything is read, outputs that are inputs, each other or existing files;
:func:`atomic_path` / :func:`atomic_write` make a file appear complete or not at all, and :func:`append_line`
adds one whole line to a log; :func:`scratch_directory` is a private (0700) directory named after its process, so
a later run removes what a killed one left; and :func:`unwinding_signals` makes SIGTERM and SIGHUP unwind like
Ctrl-C. Standard library only: the command line imports it before any numerical library.
"""

from __future__ import annotations

import contextlib
import fnmatch
import glob
import hashlib
import logging
import os
import re
import shutil
import signal
import socket
import tempfile
import threading
from typing import Iterator, Mapping

logger = logging.getLogger("topicdp")

#: the suffixes of the files a directory of shards is read from (:func:`shard_paths`)
SHARD_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet", ".csv", ".csv.gz")


def shard_paths(path: str) -> list[str]:
    """The shards of a sharded corpus path: a directory's JSON Lines, Parquet and CSV files (:data:`SHARD_SUFFIXES`)
    or a glob's matches, in name order."""
    if os.path.isdir(path):
        found = sorted(p for suffix in SHARD_SUFFIXES for p in glob.glob(os.path.join(path, "*" + suffix)))
        if not found:
            raise ValueError(f"{path}: the directory holds no .jsonl or .jsonl.gz file (nor .parquet, .csv or .csv.gz)")
        return found
    found = sorted(p for p in glob.glob(path) if os.path.isfile(p))
    if not found:
        raise FileNotFoundError(f"no file matches {path!r}")
    return found


def _same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file: equal once symbolic links are resolved, or (both existing)
    the same inode, which also catches hard links."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): the resolved paths decided
        return False


def _read_from(output: str, source: str) -> str | None:
    """How an input given as ``source`` (a file, a directory of shards or a glob) reads the file ``output``
    (now, or on the next run once ``output`` is written); None when it does not."""
    if os.path.isdir(source):
        parent = os.path.dirname(os.path.abspath(output))
        if os.path.basename(output).endswith(SHARD_SUFFIXES) and _same_file(parent, source):
            return "would be read as a shard of"
        return None
    if glob.has_magic(source):
        if any(_same_file(output, match) for match in glob.glob(source)):
            return "is a shard of"
        return "would be read as a shard of" if fnmatch.fnmatch(os.path.abspath(output),
                                                                 os.path.abspath(source)) else None
    return "is the same file as" if _same_file(output, source) else None


def check_paths(outputs: Mapping[str, str | None], inputs: Mapping[str, str | None] | None = None, *,
                overwrite: bool = False, overwrite_flag: str = "--overwrite") -> None:
    """Refuse, before anything is read or written, outputs that would clobber an input, each other or an existing
    file (``overwrite`` allows the last only).

    ``outputs`` maps a flag as typed (``"--out"``) to the file it writes, ``inputs`` a name (``"the corpus"``) to a
    file, directory of shards or glob that is read (``None``, or a path that does not exist, is skipped). The
    ``ValueError`` names both flags, or the flag and ``overwrite_flag``.
    """
    named = [(flag, os.fspath(path)) for flag, path in outputs.items() if path is not None]
    sources = [(name, os.fspath(path)) for name, path in (inputs or {}).items()
               if path is not None and (os.path.exists(path) or glob.has_magic(os.fspath(path)))]
    for i, (flag, path) in enumerate(named):
        if os.path.isdir(path) or not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise ValueError(f"{flag}: cannot write a file at {path} (a directory, or its directory does not exist)")
        for other, other_path in named[:i]:
            if _same_file(path, other_path):
                raise ValueError(f"{other} and {flag} name the same file ({path}): each output needs its own path"
                                 + (" (the owner's private diagnostics never share one with what may be published)"
                                    if "--diagnostics" in (flag, other) else ""))
        for name, source in sources:
            how = _read_from(path, source)
            if how:
                raise ValueError(f"{flag} {how} {name} ({path}): an output never replaces or joins an input")
    for flag, path in named:
        if not overwrite and os.path.lexists(path):
            raise ValueError(f"{flag}: {path} exists; pass {overwrite_flag} to replace it")


def check_output_directory(path: str, flag: str, inputs: Mapping[str, str | None] | None = None, *,
                           resumes: str, overwrite: bool = False, overwrite_flag: str = "--overwrite") -> None:
    """:func:`check_paths` for a command that writes a directory: it may not be or hold an input, and an existing one
    is written into only when it holds ``resumes`` (an earlier run to resume), is empty, or with ``overwrite``.
    """
    path = os.fspath(path)
    for name, source in (inputs or {}).items():
        if source is not None and os.path.exists(source):
            if _same_file(path, source):
                raise ValueError(f"{flag} is the same file as {name} ({path}): an output never replaces an input")
            if os.path.commonpath([os.path.realpath(path), os.path.realpath(source)]) == os.path.realpath(path):
                raise ValueError(f"{flag} holds {name} ({source} is in {path}): an output never replaces or joins "
                                 "an input")
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{flag}: {path} exists and is not a directory")
    if (os.path.isdir(path) and os.listdir(path) and not os.path.exists(os.path.join(path, resumes))
            and not overwrite):
        raise ValueError(f"{flag}: {path} exists and holds no earlier run to resume ({resumes}); pass "
                         f"{overwrite_flag} to write into it (files of the same names are replaced)")


def _owner_tag() -> str:
    """``<machine>-<pid>`` of this process: the machine as a short hash of its name (scratch and temporary
    files may sit on a file system that several machines share, where a pid alone names no process)."""
    machine = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
    return f"{machine}-{os.getpid()}"


def _left_by_a_dead_process(path: str, tag: str) -> bool:
    """Whether ``path`` (named with ``tag`` = ``<machine>-<pid>``) belongs to this user and was made on this
    machine by a process that has ended: only then may a later run remove it."""
    machine, _, pid = tag.partition("-")
    if machine != _owner_tag().partition("-")[0] or int(pid) == os.getpid():
        return False
    try:
        if os.lstat(path).st_uid != os.getuid():
            return False
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # gone meanwhile, or a live process of another user (pid reused): leave it
        return False
    return False  # the process is alive


def _left_behind(directory: str, prefix: str, directories: bool) -> list[tuple[str, str]]:
    """(path, ``<machine>-<pid>``) of the ``<prefix><machine>-<pid>-*`` files (``directories``) a dead process left."""
    pattern = re.compile(re.escape(prefix) + r"([0-9a-f]{8}-\d+)-")
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            match = pattern.match(entry.name)
            kind = entry.is_dir if directories else entry.is_file
            if match and kind(follow_symlinks=False) and _left_by_a_dead_process(entry.path, match[1]):
                found.append((entry.path, match[1]))
    return found


def _umask() -> int:
    mask = os.umask(0o077)  # reading the mask means setting it; restored at once
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path, *, private: bool = False, overwrite: bool = True) -> Iterator[str]:
    """A temporary path beside ``path`` to write; on leaving the block it replaces ``path`` atomically.

    The temporary is in the same directory (one file system for the rename), keeps ``path``'s suffix, is flushed to
    disk before the rename and removed if the block raises; a reader sees the old file or the whole new one. A
    temporary left by a killed process is removed by the next write to the same path. ``private`` gives mode 0600
    before the rename; ``overwrite=False`` refuses (``FileExistsError``) a ``path`` that exists when the file is put
    in place (a hard link, which fails rather than replace).
    """
    path = os.fspath(path)
    directory, name = os.path.split(os.path.abspath(path))
    for stale, _ in _left_behind(directory, f".{name}.tmp-", directories=False):
        with contextlib.suppress(OSError):  # gone meanwhile, or not removable: best effort
            os.unlink(stale)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.tmp-{_owner_tag()}-", suffix=os.path.splitext(name)[1],
                               dir=directory)
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600 if private else 0o666 & ~_umask())
        if overwrite:
            os.replace(tmp, path)
        else:
            refusal = (f"{path} exists (it appeared after this run checked its outputs) and is not replaced: an "
                       "existing file is replaced only when asked (--overwrite; overwrite=True in Python)")
            try:
                os.link(tmp, path)  # atomic, and fails if path exists: no window between a check and the rename
            except FileExistsError:
                raise FileExistsError(refusal) from None
            except OSError:  # a file system without hard links: the check and the rename are then two steps
                if os.path.lexists(path):
                    raise FileExistsError(refusal) from None
                os.replace(tmp, path)
            else:
                os.unlink(tmp)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself durable; not every file system can fsync a directory
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def atomic_write(path, data: str | bytes, *, private: bool = False, overwrite: bool = True) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically (:func:`atomic_path`); ``private`` gives mode 0600,
    ``overwrite=False`` refuses an existing ``path``."""
    with atomic_path(path, private=private, overwrite=overwrite) as tmp, open(tmp, "wb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def append_line(path, line: str, *, private: bool = False) -> None:
    """Append ``line`` and a newline to ``path`` (created if absent) and flush it to disk: the one writer of an
    append-only log, which no rename can make atomic (a line a kill cuts short has no newline; its reader drops it).
    The mode is :func:`atomic_path`'s: ``private`` gives 0600 (set on the open file, whoever created it), else a new
    file gets 0666 less the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600 if private else 0o666)
    try:
        if private:
            os.fchmod(fd, 0o600)
        data = memoryview((line + "\n").encode("utf-8"))
        while data:
            data = data[os.write(fd, data):]
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_stale_scratch(prefix: str, directory: str | None = None) -> list[str]:
    """Remove the directories ``<prefix><machine>-<pid>-*`` that this user's processes on this machine made and
    outlived them (a SIGKILL); a running process' directory is never touched. Returns the removed paths.
    """
    directory = tempfile.gettempdir() if directory is None else directory
    removed = []
    for path, tag in _left_behind(directory, prefix, directories=True):
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
        logger.info("removed %s, a scratch directory left by a killed run (pid %s)", path, tag.partition("-")[2])
    return removed


def scratch_directory(prefix: str, directory: str | None = None) -> tempfile.TemporaryDirectory:
    """A private (0700) temporary directory named ``<prefix><machine>-<pid>-<random>``, after removing those
    that killed runs left (:func:`remove_stale_scratch`). Its ``cleanup`` (or leaving its ``with`` block)
    removes it; :func:`unwinding_signals` makes SIGTERM reach that too."""
    remove_stale_scratch(prefix, directory)
    return tempfile.TemporaryDirectory(prefix=f"{prefix}{_owner_tag()}-", dir=directory)


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP: the terminal closed), raised in the main thread as Ctrl-C's ``KeyboardInterrupt`` is,
    so that the same unwinding runs (and code that stops on Ctrl-C stops on it too)."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(int(signum))
        self.exit_status = 128 + int(signum)


def _raise_terminated(signum, frame) -> None:
    raise Terminated(signum)


#: the signals that end a run and can be caught, besides SIGINT (Python's KeyboardInterrupt already)
UNWINDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def unwinding_signals() -> Iterator[None]:
    """Inside the block SIGTERM and SIGHUP raise :class:`Terminated`; a signal the parent ignored stays ignored, the
    previous handlers come back on exit, and outside the main thread the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in UNWINDING_SIGNALS}
    for sig, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(sig, _raise_terminated)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            if handler is not None:  # None: set outside Python, cannot be restored (and was not replaced)
                signal.signal(sig, handler)


def interrupt_status(exc: KeyboardInterrupt) -> int:
    """The exit status of a run that ``exc`` stopped: 128 + the signal (130 SIGINT, 143 SIGTERM, 129 SIGHUP)."""
    return getattr(exc, "exit_status", 128 + signal.SIGINT)


def add_overwrite_argument(parser) -> None:
    """``--overwrite``: one name and one meaning in every command that writes files."""
    parser.add_argument("--overwrite", action="store_true",
                        help="replace output files that exist (without it an existing output is refused before "
                             "anything is read); an output may never be an input or another output")


def check_input_file(path: str, flag: str, give: str = "a file") -> None:
    """Refuse, naming ``flag``, an input file that does not exist or is a directory (before it is opened)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{flag}: no such file: {path}")
    if os.path.isdir(path):
        raise ValueError(f"{flag}: {path} is a directory; give {give}")


def check_file_flags(args, outputs: tuple[str, ...], inputs: tuple[str, ...] = ()) -> None:
    """:func:`check_paths` of parsed flags: ``outputs`` and ``inputs`` are flags (``"--out"``) or positional
    names (``"corpus"``, said "the corpus"); a built-in corpus' name is no path and is skipped as one."""
    def value(name: str):
        return getattr(args, name.lstrip("-").replace("-", "_"), None)

    check_paths({flag: value(flag) for flag in outputs},
                {(name if name.startswith("-") else f"the {name}"): value(name) for name in inputs},
                overwrite=getattr(args, "overwrite", False))


def wrote(args, flag: str, line: str) -> None:
    """Print ``line`` (``flag``'s file is written) and remember ``flag`` for the line an interruption prints."""
    args.written = [*getattr(args, "written", []), flag]
    print(line)


def interrupted(args, exc: KeyboardInterrupt) -> int:
    """One line on stderr for a run stopped by a signal, and its exit status (every ``with`` block has exited by then)."""
    import sys

    written = getattr(args, "written", [])
    done = f"only {', '.join(written)} had been written" if written else "nothing was published"
    spent = getattr(exc, "spent", None)  # set by the release pipeline when the ledger had recorded a spend
    print(f"topicdp: interrupted; {done} and the scratch files were removed" + (f"; {spent}" if spent else ""),
          file=sys.stderr)
    return interrupt_status(exc)


def run_interruptible(args) -> int:
    """``args.check(args)``, then ``args.func(args)``, with SIGTERM and SIGHUP unwinding as Ctrl-C does; an interruption
    ends with :func:`interrupted`'s line and status 128 + the signal, no traceback.
    """
    try:
        with unwinding_signals():
            args.check(args)
            return args.func(args)
    except KeyboardInterrupt as exc:
        return interrupted(args, exc)
    except Exception as exc:
        # the interrupt can land inside a writer whose own cleanup then fails (a half-written count shard's zip
        # file refuses to close), and a caller may reword that error: it is still an interruption
        cause: BaseException | None = exc  # the KeyboardInterrupt (or Terminated) it was raised while handling
        seen: set[int] = set()
        while cause is not None and not isinstance(cause, KeyboardInterrupt) and id(cause) not in seen:
            seen.add(id(cause))
            cause = cause.__cause__ or cause.__context__
        if not isinstance(cause, KeyboardInterrupt):
            raise
        return interrupted(args, cause)
