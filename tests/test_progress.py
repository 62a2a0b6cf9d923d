"""Progress bars in a log: whole lines, not thousands of carriage-return frames (sentemb.progress)."""

import io
import sys

from sentemb import progress as progress_module
from sentemb.progress import LineWriter, progress


def test_a_bar_in_a_log_writes_whole_lines_and_no_carriage_returns(monkeypatch):
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    monkeypatch.setattr(progress_module, "LOG_INTERVAL_SECONDS", 0.0)
    for _ in progress(range(2000), desc="train", mininterval=0.0):
        pass
    text = log.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = text.splitlines()
    assert lines[0].startswith("train:") and "2000/2000" in lines[-1]
    assert all(line.startswith("train:") for line in lines)


def test_a_bar_in_a_log_writes_at_most_one_line_per_interval(monkeypatch):
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    for _ in progress(range(5000), desc="train", mininterval=0.0):
        pass
    # the 30-s interval: the first frame, the last, and nothing between on a loop this fast
    assert len(log.getvalue().splitlines()) <= 3


def test_a_transient_bar_in_a_log_writes_nothing_when_it_is_short(monkeypatch):
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    for _ in progress(range(100), desc="encode", leave=False):
        pass
    assert log.getvalue() == ""


def test_line_writer_drops_clearing_frames_escapes_and_repeats():
    out = io.StringIO()
    writer = LineWriter(out)
    writer.write("\rstep 1")
    writer.write("\r\x1b[A      \r")
    writer.write("\rstep 2\n")
    writer.write("\rstep 2")
    assert out.getvalue() == "step 1\nstep 2\n"
