"""Measurements of a change to the code (its shape, the test suite's time), not of the product."""
