"""The package version, from the installed metadata (or the compiled core)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from . import _core


def _version() -> str:
    try:
        return version("ccarena")
    except PackageNotFoundError:  # a source tree that is not installed
        return str(_core.__version__)


__version__: str = _version()
