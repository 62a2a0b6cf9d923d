"""Progress bars that read well both in a terminal and in a log file.

In a terminal a bar redraws itself in place (tqdm's carriage-return frames). In a log (``> log``, CI, a
notebook's captured stderr) those frames pile up into one line thousands of characters long. So when stderr is not
a terminal, :func:`progress` writes one plain line per update at most every ``LOG_INTERVAL_SECONDS`` and one
final line; a bar meant to vanish (``leave=False``: the nested encoding bars) writes nothing unless it lasts longer
than that interval.

tqdm has no such mode of its own (``TQDM_MININTERVAL`` slows the frames but they still share one line), hence the
small line-splitting file below.
"""

from __future__ import annotations

import re
import sys

from tqdm.auto import tqdm

LOG_INTERVAL_SECONDS = 30.0
_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class LineWriter:
    """A text stream that turns each tqdm frame (``\\r...``) into its own line and drops the blank
    clearing frames, cursor-movement escapes and a frame identical to the one before (tqdm redraws the final
    state on close)."""

    def __init__(self, stream):
        self.stream = stream
        self.last = None

    def write(self, text: str) -> int:
        for frame in re.split(r"[\r\n]", _ESCAPE.sub("", text)):
            frame = frame.rstrip()
            if frame.strip() and frame != self.last:
                self.stream.write(frame + "\n")
                self.last = frame
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def is_terminal(stream=None) -> bool:
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def progress(
    iterable=None, *, desc: str, disable: bool = False, leave: bool = True, mininterval: float = 2.0, **kwargs
) -> tqdm:
    """``tqdm(iterable, desc=..., **kwargs)`` in a terminal; in a log, line-per-update every 30 s (see module)."""
    if is_terminal():
        return tqdm(iterable, desc=desc, disable=disable, leave=leave, mininterval=mininterval, **kwargs)
    return tqdm(
        iterable,
        desc=desc,
        disable=disable,
        leave=True,
        file=LineWriter(sys.stderr),
        mininterval=max(mininterval, LOG_INTERVAL_SECONDS),
        delay=0 if leave else LOG_INTERVAL_SECONDS,
        ascii=True,
        ncols=100,
        **kwargs,
    )
