"""A fix's text edits are computed on an excerpt of the file: the statements
the fix touches and the head of imports (`pipeline/fix_edits.py`). They must
be exactly the edits of the fix applied to the whole module."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.pipeline.decoration_gate import find_violations
from tfrewrite.pipeline.fix_edits import FixEdits
from tfrewrite.pipeline.fixer import apply_fixes
from tfrewrite.pipeline.parsing import parse_module
from tfrewrite.pipeline.rule_pass import applicable_rules
from tfrewrite.pipeline.run_options import RunOptions
from tfrewrite.pipeline.suppression import NoqaMap
from tfrewrite.report.edits import text_edits
from tfrewrite.rules import rule_specs

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))
EXAMPLE_TEXTS = {p.read_text() for p in EXAMPLES}

# `np` stays imported: a statement the excerpt leaves out still reads it.
NUMPY_READ_ELSEWHERE = """
import numpy as np
import tensorflow as tf

SEED = np.float32(3.0)


@tf.function
def noisy(x):
    return x + np.random.normal()
"""

# The last fix sits right after the imports (no blank line), the one before
# it far below: excerpts of statements that are not neighbours in the file.
TIGHT = """
import numpy as np
import tensorflow as tf
@tf.function
def first(x):
    print(x)
    return x


def spacer():
    return 1


@tf.function
def last(x):
    return x * np.random.uniform()
"""

NO_TRAILING_NEWLINE = (
    "import tensorflow as tf\n\n\n@tf.function\ndef f(x):\n    print(x)\n    return x"
)


def _fixes(code: str, path: str = "module.py") -> tuple:
    module = parse_module(code)
    index = build_index(code, path, "module")
    traced = compute_facts([index]).for_path(path)
    codes = tuple(spec.code for spec in rule_specs())
    options = RunOptions(rule_codes=codes, root=".", unsafe_fixes=True)
    rules = applicable_rules(path, index, traced, options)
    ctx = RuleContext(path, module, index, traced)
    found = find_violations(rules, ctx, NoqaMap(code))
    return module, [f.violation.fix for f in found if f.violation.fix is not None]


def _whole_module_edits(module, code: str, fix) -> tuple:
    fixed, applied = apply_fixes(module, [fix])
    return text_edits(code, fixed.code) if applied else ()


@pytest.mark.parametrize(
    "code",
    [
        *[p.read_text() for p in EXAMPLES],
        NUMPY_READ_ELSEWHERE.lstrip(),
        TIGHT.lstrip(),
        NO_TRAILING_NEWLINE,
        textwrap.dedent('''
            """A docstring first."""
            import tensorflow as tf

            @tf.function
            def f(x):
                print(x)
                return x
        ''').lstrip(),
    ],
    ids=[*[p.stem for p in EXAMPLES], "read-elsewhere", "tight", "no-newline", "docstring"],
)
def test_excerpt_edits_are_the_whole_module_edits(code: str) -> None:
    module, fixes = _fixes(code)
    assert fixes or code in EXAMPLE_TEXTS  # an example may hold no fix
    edits_of = FixEdits(module, code)
    for fix in fixes:
        assert edits_of.of(fix) == _whole_module_edits(module, code, fix), fix.message


def test_an_import_read_by_a_statement_left_out_of_the_excerpt_stays() -> None:
    code = NUMPY_READ_ELSEWHERE.lstrip()
    module, fixes = _fixes(code)
    edits = [e for fix in fixes for e in FixEdits(module, code).of(fix)]
    assert edits and all("import numpy" not in code.splitlines()[e.start.line - 1] for e in edits)
