"""A file written whole or not at all: readers, and another process writing the same file,
see the old one or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def written_whole(path: Path, prefix: str = ".partial-", suffix: str = "") -> Iterator[Path]:
    """A temporary file beside `path` for the block to write; it becomes `path` in one rename
    when the block ends, and is removed when the block raises."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=suffix)
    os.close(handle)
    try:
        yield Path(temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
