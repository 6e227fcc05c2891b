"""Benchmarks of how private a release is: audits, neighbours, the ledger, the files a release writes."""
