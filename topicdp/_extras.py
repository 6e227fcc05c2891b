"""Optional dependencies (``pyproject.toml``'s extras): :func:`require` refuses early, with the install command, while
a command checks its arguments, so a missing library costs no computing time.
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
    """Raise :class:`MissingExtraError`, with the exact install command (``pip install "topicdp[plots]"``), unless
    ``module`` can be imported; ``purpose`` (an option such as ``"--plot"``) is named in the message.
    """
    if extra not in EXTRAS:
        raise ValueError(f"extra must be one of {', '.join(EXTRAS)}; got {extra!r}")
    if not _available(module):
        needed = f" for {purpose}" if purpose else ""
        raise MissingExtraError(f"{module} is needed{needed} but is not installed; install it with: "
                                f"{install_command(extra)}", name=module)
