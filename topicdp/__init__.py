"""topicdp: differentially private topic models."""

__version__ = "0.1.0"
