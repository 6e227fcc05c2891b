"""Reports for the display and file tests, made as every producer makes them (:func:`topicdp.report.compose_report`)."""

from __future__ import annotations

from topicdp.report import STEP_FIELDS, PrivacyReport, ReportParts, compose_report

_RELEASE = ("mechanism", "guarantee", "unit", "neighbours", "epsilon", "delta", "seeded", "composition",
            "composition_total")


def make_report(**kwargs) -> PrivacyReport:
    """One step's report from keyword arguments named as :class:`PrivacyReport`'s fields."""
    release = {name: kwargs.pop(name) for name in _RELEASE if name in kwargs}
    step_fields = {name: kwargs.pop(name) for name in STEP_FIELDS if name in kwargs}
    return compose_report(ReportParts(report_fields=step_fields, **kwargs), **release)
