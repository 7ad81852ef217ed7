"""`python -m tfrewrite` runs the command line."""

import os
import sys


def _drop_working_directory() -> None:
    """`python -m` puts the working directory first on `sys.path`: run
    inside a project with a top-level `random/` or `types.py`, the standard
    library's modules would be the project's, here and in every rule worker
    (which takes this `sys.path`). The entry is dropped unless tfrewrite
    itself was found there (run from a source tree's `src/`)."""
    if getattr(sys.flags, "safe_path", False) or not sys.path:
        return
    first = os.path.abspath(sys.path[0] or os.curdir)
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if first == os.path.abspath(os.curdir) and first != package_parent:
        del sys.path[0]


_drop_working_directory()

from tfrewrite.cli import main  # noqa: E402 - after the path is safe

if __name__ == "__main__":
    main()
