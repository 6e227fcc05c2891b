"""Measurements of topicdp (``benchmarks/README.md``), and benchmark-only code with its tests beside it.

A package so that a test beside benchmark code (``benchmarks/*/test_*.py``, collected by the default test command)
imports it as ``benchmarks.GROUP.module``; the scripts themselves run by path (``python benchmarks/GROUP/script.py``).
"""
