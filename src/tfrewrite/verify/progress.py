"""The progress line of `tfrewrite verify` on standard error.

    verify: 12/50 done (4 resumed), 0.8/s, ETA 48s | Ray cluster, 8 CPUs

Rewritten in place (a carriage return), cleared when the run ends; the
report itself goes to standard output untouched. The ETA is the time per
target so far in this run (resumed targets cost nothing) times the targets
left.

Standard library only.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class ProgressLine:
    """Done / total, rate, ETA and what runs the targets."""

    def __init__(
        self,
        total: int,
        resumed: int = 0,
        where: str = "",
        stream: IO[str] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.total = total
        self.resumed = resumed
        self.done = resumed
        self.where = where
        self._stream = stream if stream is not None else sys.stderr
        self._now = clock or time.monotonic
        self._started = self._now()
        self._width = 0

    def text(self) -> str:
        ran = self.done - self.resumed
        left = self.total - self.done
        elapsed = self._now() - self._started
        parts = [f"verify: {self.done}/{self.total} done"]
        if self.resumed:
            parts[0] += f" ({self.resumed} resumed)"
        if ran and elapsed > 0:
            parts.append(f"{ran / elapsed:.2g}/s")
            parts.append(f"ETA {_duration(elapsed / ran * left)}")
        else:
            parts.append("ETA -")
        line = ", ".join(parts)
        return f"{line} | {self.where}" if self.where else line

    def show(self) -> None:
        line = self.text()
        pad = max(0, self._width - len(line))
        self._stream.write("\r" + line + " " * pad)
        self._stream.flush()
        self._width = len(line)

    def advance(self) -> None:
        self.done += 1
        self.show()

    def clear(self) -> None:
        if self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
            self._width = 0
