"""Optional dependencies: refuse early, with the install command, when an extra is missing.

The extras are those of ``pyproject.toml``: ``plots`` (matplotlib), ``cluster`` (dask.distributed) and
``fast`` (numba, the compiled E-step; never required, numpy is the fallback), ``tomotopy`` (the
:class:`topicdp.adapters.TomotopyLDA` adapter), ``tables`` (pyarrow: Parquet and CSV corpora) and ``sql``
(SQLAlchemy: a corpus read by a query, :mod:`topicdp.tables`). A
command that will need one checks for it with :func:`require` while it checks its arguments, before it
reads data or fits a model, so that a missing library costs no computing time (``topicdp compare``
used to compute for minutes and then fail on ``import matplotlib``).
"""

from __future__ import annotations

import importlib.util

#: extra -> the modules it installs (pyproject.toml's optional-dependencies)
EXTRAS: dict[str, tuple[str, ...]] = {"plots": ("matplotlib",), "cluster": ("dask", "dask.distributed"),
                                      "fast": ("numba",), "tomotopy": ("tomotopy",), "tables": ("pyarrow",),
                                      "sql": ("sqlalchemy",)}


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message gives the command that installs it."""


def install_command(extra: str) -> str:
    """The command that installs ``extra``, e.g. ``pip install "topicdp[plots]"``."""
    return f'pip install "topicdp[{extra}]"'


def _available(module: str) -> bool:
    # find_spec locates the module without executing it (importing matplotlib costs about 0.3 s); a dotted
    # name imports its parent packages, which is what using it would do anyway
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a missing parent package; a module set to None in sys.modules
        return False


def require(module: str, *, extra: str, purpose: str | None = None) -> None:
    """Raise :class:`MissingExtraError` unless ``module`` can be imported.

    Parameters
    ----------
    module : str
        The module needed, e.g. ``"matplotlib"`` or ``"dask.distributed"``.
    extra : {"plots", "cluster", "fast", "tomotopy", "tables", "sql"}
        The extra of ``topicdp`` that installs it (named in the message's install command).
    purpose : str, optional
        What needs it (an option such as ``"--plot"``), for the message.

    Raises
    ------
    MissingExtraError
        With the exact install command, e.g. ``pip install "topicdp[plots]"``.
    """
    if extra not in EXTRAS:
        raise ValueError(f"extra must be one of {', '.join(EXTRAS)}; got {extra!r}")
    if not _available(module):
        needed = f" for {purpose}" if purpose else ""
        raise MissingExtraError(f"{module} is needed{needed} but is not installed; install it with: "
                                f"{install_command(extra)}", name=module)
