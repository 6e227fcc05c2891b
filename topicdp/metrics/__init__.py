"""Utility metrics for released topic-word matrices."""

from .recovery import match_topics, recovery_error

__all__ = ["match_topics", "recovery_error"]
