"""The package version, in a module of its own: the lowest module, so anything may import it without a cycle."""

__all__ = ["__version__"]

__version__ = "0.1.0"
