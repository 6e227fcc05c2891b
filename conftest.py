"""Doctest collection over the ``topicdp`` package (``--doctest-modules`` in pyproject.toml).

Modules that need an optional extra are left out when the extra is not installed, so the default test
command passes on the core install.
"""

import importlib.util

EXTRAS = {
    "matplotlib": ["topicdp/experiments/plots.py"],
    "dask": ["topicdp/streaming/executor.py", "topicdp/samplers/cluster.py"],
    "numba": ["topicdp/inference/_estep_numba.py"],
}

collect_ignore = [path for module, paths in EXTRAS.items() if importlib.util.find_spec(module) is None
                  for path in paths]


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_release_history():
    """Each test starts as a fresh process would: the sketch of earlier private fits (the repeated-release warning's
    memory) is emptied, so a test sees only the repeated releases it makes itself, and must expect those."""
    from topicdp._repeats import _SEEN

    _SEEN.clear()
    yield
