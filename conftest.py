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
