"""Writing folders so that a folder with its final name is always whole.

Everything is written into a hidden temporary sibling and renamed into
place at the end (:func:`atomic_folder`); on any error, or an interrupt,
the temporary folder is removed. Existing folders are never overwritten.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ResultExistsError", "atomic_folder", "make_temp_dir"]


class ResultExistsError(FileExistsError):
    """The output folder already exists; ccarena never overwrites results."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path

    def __str__(self) -> str:
        return f"{self.path}: already exists (ccarena never overwrites results; choose another folder)"


def exists(path: Path) -> bool:
    """Whether anything (a folder, a file, a dangling link) has this name."""
    return path.exists() or path.is_symlink()


def make_temp_dir(parent: Path, name: str) -> Path:
    """A new hidden folder ``parent/.NAME.tmp-XXXXXXXX``."""
    for _ in range(100):
        tmp = parent / f".{name}.tmp-{secrets.token_hex(4)}"
        try:
            tmp.mkdir()
        except FileExistsError:
            continue
        return tmp
    raise FileExistsError(f"{parent}: cannot create a temporary folder for {name}")


@contextmanager
def atomic_folder(out: Path) -> Iterator[Path]:
    """Yields a temporary folder to fill; renames it to ``out`` when the block ends without error.

    Raises :class:`ResultExistsError` if ``out`` exists, before or after the block.
    """
    if exists(out):
        raise ResultExistsError(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_temp_dir(out.parent, out.name)
    try:
        yield tmp
        if exists(out):
            raise ResultExistsError(out)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
