"""Write a file so that readers see either the old file or the complete new one, never a half-written file.

The content goes to a hidden temporary sibling (same directory, same suffix, so numpy does not append one) and is
renamed over the target; if writing fails, the temporary file is removed and the target is left untouched.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable


def atomic_write(path: Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` to produce the content, then rename ``tmp`` to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp{path.suffix}")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: Path, text: str) -> Path:
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
