"""The fixer keeps its promises: imports a fix made unused go, imports that
were unused before stay, an added standard-library import joins its group,
and `check`'s fixable count is what `fix` then fixes."""

from __future__ import annotations

import json
import os
import re
import shutil
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tfrewrite.api import fix_source
from tfrewrite.cli import app

EXAMPLES = Path(__file__).parent.parent / "examples"


def _fix(source: str, **kwargs) -> str:  # type: ignore[no-untyped-def]
    return fix_source(textwrap.dedent(source), **kwargs)


def test_imports_the_fixes_made_unused_are_removed() -> None:
    fixed = _fix(
        """\
        import os
        import random

        import numpy as np
        import tensorflow as tf


        @tf.function
        def loss(y_true, y_pred):
            noise = np.random.normal(0.0, 1.0)
            return tf.reduce_mean(y_true - y_pred) + noise + random.random()
        """,
        select=["TFR102", "TFR106"],
    )
    assert fixed == textwrap.dedent(
        """\
        import os

        import tensorflow as tf


        @tf.function
        def loss(y_true, y_pred):
            noise = tf.random.normal([], mean=0.0, stddev=1.0, dtype=y_true.dtype)
            return tf.reduce_mean(y_true - y_pred) + noise + tf.random.uniform([], dtype=y_true.dtype)
        """
    )  # `import os` was unused before the fix: it stays


def test_an_import_still_used_elsewhere_stays() -> None:
    fixed = _fix(
        """\
        import numpy as np
        import tensorflow as tf

        SCALE = np.float32(2.0)


        @tf.function
        def loss(y_true, y_pred):
            return tf.reduce_mean(y_true - y_pred) + np.random.normal(0.0, 1.0)
        """,
        select=["TFR102"],
    )
    assert fixed.startswith("import numpy as np\nimport tensorflow as tf\n")
    assert "tf.random.normal(" in fixed


def test_an_import_read_by_a_parameter_default_or_annotation_stays() -> None:
    # A parameter's name is no read of an import, but its default and its
    # annotation are: removing `numpy` here would leave a NameError.
    for signature in ("x, scale=np.float32(2.0)", "x, scale: np.ndarray"):
        fixed = _fix(
            f"""\
            import numpy as np
            import tensorflow as tf


            @tf.function
            def step({signature}):
                return x * np.random.uniform()
            """,
            unsafe_fixes=True,
        )
        assert "import numpy as np" in fixed
        assert "tf.random.uniform" in fixed


def test_added_import_sys_joins_the_standard_library_group() -> None:
    source = """\
        \"\"\"Losses.\"\"\"
        import os

        import tensorflow as tf


        @tf.function
        def loss(y_true, y_pred):
            print(y_pred)
            return tf.reduce_mean(y_true - y_pred) + len(os.sep)
        """
    fixed = _fix(source, select=["TFR103"])
    assert fixed.startswith('"""Losses."""\nimport os\nimport sys\n\nimport tensorflow as tf\n')


def test_added_import_sys_starts_a_group_before_third_party_imports() -> None:
    source = """\
        import tensorflow as tf


        @tf.function
        def loss(y_true, y_pred):
            print(y_pred)
            return tf.reduce_mean(y_true - y_pred)
        """
    fixed = _fix(source, select=["TFR103"])
    assert fixed.startswith("import sys\n\nimport tensorflow as tf\n")
    assert _fix(fixed, select=["TFR103"]) == fixed


def _fixed_count(output: str) -> int:
    match = re.search(r"Fixed (\d+) finding", output)
    return int(match.group(1)) if match else 0


@pytest.mark.parametrize("flags", [[], ["--unsafe-fixes"]], ids=["safe", "unsafe"])
def test_check_fixable_count_equals_what_fix_fixes(tmp_path: Path, flags: list[str]) -> None:
    target = tmp_path / "examples"
    shutil.copytree(EXAMPLES, target)
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(target)
    try:
        check = runner.invoke(app, ["check", ".", "--output-format", "json", *flags])
        applicable = {"safe", "unsafe"} if flags else {"safe"}
        fixable = sum(
            1
            for f in json.loads(check.stdout)
            if f["fix"] and f["fix"]["applicability"] in applicable
        )
        fixed = runner.invoke(app, ["fix", ".", *flags])
        assert _fixed_count(fixed.output) == fixable, fixed.output
    finally:
        os.chdir(old)


def test_fixable_with_unsafe_fixes_is_what_fix_with_unsafe_fixes_fixes(tmp_path: Path) -> None:
    """`check` without `--unsafe-fixes`: "N fixable; M more with
    `--unsafe-fixes`" is what `fix --unsafe-fixes` then fixes (N + M)."""
    target = tmp_path / "examples"
    shutil.copytree(EXAMPLES, target)
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(target)
    try:
        check = runner.invoke(app, ["check", ".", "--output-format", "json"])
        offered = sum(1 for f in json.loads(check.stdout) if f["fix"])
        fixed = runner.invoke(app, ["fix", ".", "--unsafe-fixes"])
        assert _fixed_count(fixed.output) == offered, fixed.output
    finally:
        os.chdir(old)
