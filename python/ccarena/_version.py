"""The package version: the compiled core's, which maturin also gives the installed package."""

from __future__ import annotations

from . import _core

__version__: str = str(_core.__version__)
