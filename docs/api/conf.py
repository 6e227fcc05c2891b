"""Sphinx configuration of topicdp's API reference.

Build (from the repository root; ``make docs`` does this):

    python -m sphinx -W --keep-going -b html docs/api build/docs
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # document this checkout, not an installed copy

project = "topicdp"
author = "topicdp contributors"
copyright = "topicdp contributors"
release = version = "0.1.0"

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]

# numpy-style docstrings (Parameters / Returns / Examples sections)
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_preprocess_types = False

autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_class_signature = "separated"
autodoc_preserve_defaults = True

html_theme = "alabaster"
html_title = "topicdp"
exclude_patterns = ["_build"]
nitpicky = False


def _skip_generated_sklearn_methods(app, what, name, obj, skip, options):
    """scikit-learn generates ``set_fit_request``/``set_score_request`` on every estimator (metadata routing);
    their docstrings cross-reference scikit-learn's own docs, which are not part of these pages."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_generated_sklearn_methods)
