"""The comparison harness behind ``topicdp compare``: every mechanism on the same data, privacy budget
and metrics, written as a tidy CSV (resumable) and PNG plots."""

from .compare import CompareGrid, compare

__all__ = ["CompareGrid", "compare"]
