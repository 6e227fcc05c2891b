"""The comparison harness behind ``topicdp compare``: every road (the release pipeline's registry rows and the
random-DP road) on the same corpus and budget, scored privately on held-out users: a publishable table and the
owner's diagnostics."""

from .compare import CompareSettings, compare

__all__ = ["CompareSettings", "compare"]
