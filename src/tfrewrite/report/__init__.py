"""Report formats: one finding model, many renderings.

Each format is a function `(findings, errors, context) -> str` registered in
`FORMATS`. Positions are 1-based lines and columns everywhere; a format that
defines columns in another unit (SARIF: UTF-16, rdjson: UTF-8 bytes) converts
from the source line held in `ReportContext.sources`.
"""

from __future__ import annotations

# The format modules register themselves in `FORMATS` when imported.
from tfrewrite.report import github, junit, machine, rdjson, sarif, text  # noqa: F401
from tfrewrite.report.base import (
    FORMATS,
    FORMATS_WITH_EDITS,
    Formatter,
    ReportContext,
    register,
)

__all__ = ["FORMATS", "FORMATS_WITH_EDITS", "Formatter", "ReportContext", "register"]
