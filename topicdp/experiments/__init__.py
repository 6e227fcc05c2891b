"""The comparison harness behind ``topicdp compare`` (:mod:`topicdp.experiments.compare`)."""

from .compare import CompareSettings, compare

__all__ = ["CompareSettings", "compare"]
