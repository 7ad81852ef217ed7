"""Fuzzing the whole check-and-fix path.

Two sources of programs:

- `hypothesmith` generates arbitrary valid Python (from the grammar), so the
  indexer, the parser and every rule's gate meet syntax nobody wrote by hand;
- a template generator writes TensorFlow losses from the pieces tfrewrite
  rewrites (tensor `if`/`elif` chains, nested conditionals, `np.random`,
  `random`, `print`, NumPy math, module flags), so the rules and their fixes
  run on combinations nobody wrote by hand.

For each program: no crash (no internal error), the fixed code parses, `fix`
is idempotent, and the number of fixable findings `check` reports is what
`fix` fixes. The suite runs a few hundred examples; `make fuzz` runs more
(`TFREWRITE_FUZZ_EXAMPLES`).
"""

from __future__ import annotations

import ast
import os

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.findings import FileResult
from tfrewrite.pipeline.engine import InputFile, RunOptions
from tfrewrite.pipeline.rule_pass import FileJob, process_file
from tfrewrite.rules import select_rules

EXAMPLES = int(os.environ.get("TFREWRITE_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    derandomize=EXAMPLES <= 150,  # the suite is reproducible; `make fuzz` explores
)
CODES = tuple(r.code for r in select_rules(["TFR"], []))


def _run(source: str, fix: bool, unsafe: bool) -> FileResult:
    index = build_index(source, "fuzzed.py", "fuzzed")
    options = RunOptions(rule_codes=CODES, root=".", fix=fix, unsafe_fixes=unsafe)
    traced = compute_facts([index]).for_path("fuzzed.py")
    return process_file(FileJob(InputFile("fuzzed.py", source), index, traced, options))


def check_properties(source: str, unsafe: bool) -> None:
    checked = _run(source, fix=False, unsafe=unsafe)
    if checked.error is not None:
        if checked.error.message.startswith("syntax error"):
            return  # not ours: the generator's program does not parse
        pytest.fail(f"check crashed: {checked.error.describe()}\n{source}")
    fixed_result = _run(source, fix=True, unsafe=unsafe)
    if fixed_result.error is not None:
        pytest.fail(f"fix crashed: {fixed_result.error.describe()}\n{source}")
    fixed = fixed_result.fixed_source if fixed_result.fixed_source is not None else source
    ast.parse(fixed)
    again = _run(fixed, fix=True, unsafe=unsafe)
    assert again.error is None, again.error.describe()
    assert again.fixed_source in (None, fixed), f"fix is not idempotent:\n{source}"
    applicable = {"safe", "unsafe"} if unsafe else {"safe"}
    fixable = sum(1 for f in checked.findings if f.fix and f.fix.applicability.value in applicable)
    if len(fixed_result.fixes_applied) != fixable:
        pytest.fail(
            f"check says {fixable} fixable, fix fixed {len(fixed_result.fixes_applied)}:\n{source}"
        )


# -- hypothesmith: any Python -------------------------------------------------------------


@FUZZ
@given(hypothesmith.from_grammar())
def test_fuzz_arbitrary_python(program: str) -> None:
    """Arbitrary Python, with a TensorFlow import so pass 1 indexes it."""
    check_properties("import tensorflow as tf\n" + program, unsafe=True)


# -- templates: TensorFlow losses ---------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "scale", "noise"])
TENSOR_TESTS = st.sampled_from(
    [
        "tf.reduce_mean(y_pred) > 0",
        "tf.reduce_sum(y_true) < 1.0",
        "y_pred[0] > y_true[0]",
        "tf.reduce_max(diff) > 0.5",
    ]
)
PYTHON_TESTS = st.sampled_from(["y_pred.shape[0] > 1", "training", "y_true is None"])
VALUES = st.sampled_from(
    [
        "1.0",
        "2.0 * diff",
        "np.random.normal(0.0, 1.0)",
        "np.random.uniform(0.0, 1.0, size=y_pred.shape)",
        "random.random()",
        "np.mean(diff)",
        "np.square(diff)",
        "tf.reduce_mean(diff)",
        "FLAG_SCALE",
    ]
)


@st.composite
def statements(draw: st.DrawFn, depth: int = 0) -> list[str]:
    kind = draw(st.sampled_from(["assign", "print", "if", "if_elif"] if depth < 2 else ["assign"]))
    name = draw(NAMES)
    if kind == "assign":
        return [f"{name} = {draw(VALUES)}"]
    if kind == "print":
        return [draw(st.sampled_from([f"print({name})", 'print("loss", diff)', "print(diff)"]))]
    test = draw(st.one_of(TENSOR_TESTS, PYTHON_TESTS))
    body = draw(statements(depth + 1))
    other = draw(statements(depth + 1))
    lines = [f"if {test}:", *("    " + line for line in body)]
    if kind == "if_elif":
        lines += [f"elif {draw(TENSOR_TESTS)}:", *("    " + line for line in other)]
    lines += ["else:", *("    " + line for line in draw(statements(depth + 1)))]
    return lines


@st.composite
def losses(draw: st.DrawFn) -> str:
    decorated = draw(st.booleans())
    body: list[str] = ["diff = y_true - y_pred", "a = b = scale = noise = 0.0"]
    for _ in range(draw(st.integers(1, 4))):
        body += draw(statements())
    body.append("return tf.reduce_mean(diff) * scale + a + b + noise")
    lines = [
        "import random",
        "",
        "import numpy as np",
        "import tensorflow as tf",
        "",
        "FLAG_SCALE = 1.0",
        "",
        "",
        *(["@tf.function"] if decorated else []),
        "def loss(y_true, y_pred, training=False):",
        *("    " + line for line in body),
        "",
        "",
        "def set_scale(value):",
        "    global FLAG_SCALE",
        "    FLAG_SCALE = value",
    ]
    if not decorated:
        lines += ["", "", "model = None", "model.compile(loss=loss)"]
    return "\n".join(lines) + "\n"


@FUZZ
@given(losses(), st.booleans())
def test_fuzz_tensorflow_losses(source: str, unsafe: bool) -> None:
    check_properties(source, unsafe=unsafe)


# -- templates: training loops -------------------------------------------------------------

# Bodies of a helper the loss or the step calls: each does something that
# changes under tracing (or nothing), so a fix that makes it traced (a
# decorated or extracted step) must fix or report it in the same run.
HELPER_BODIES = st.sampled_from(
    [
        ["return x"],
        ["return x * random.random()"],
        ["return x + np.random.normal(0.0, 1.0)"],
        ["return x + tf.broadcast_to(1.0, x.shape)"],
        ['print("x", x)', "return x"],
        ["return x * FLAG"],
        ["LOG.append(x)", "return x"],
        ["if tf.reduce_mean(x) > 0:", "    x = x * 2.0", "return x"],
    ]
)


@st.composite
def training_loops(draw: st.DrawFn) -> str:
    """A loss, a helper, and a training loop: a step function called from a
    loop (decorated or not) or a tape block written inline in the loop, with
    per-batch losses averaged at the end."""
    loss_decorated = draw(st.booleans())
    helper_in = draw(st.sampled_from(["loss", "step", "both", "none"]))
    style = draw(st.sampled_from(["step", "decorated step", "inline"]))
    training = draw(st.sampled_from(["", ", training=True"]))
    in_loss = "helper(logits)" if helper_in in ("loss", "both") else "logits"
    extra = " + tf.reduce_mean(helper(x))" if helper_in in ("step", "both") else ""
    lines = [
        "import random",
        "",
        "import numpy as np",
        "import tensorflow as tf",
        "",
        "FLAG = 1.0",
        "LOG = []",
        "",
        "",
        "def set_flag(value):",
        "    global FLAG",
        "    FLAG = value",
        "",
        "",
        "def helper(x):",
        *("    " + line for line in draw(HELPER_BODIES)),
        "",
        "",
        *(["@tf.function"] if loss_decorated else []),
        "def loss_fn(labels, logits):",
        f"    return tf.reduce_mean(tf.square(labels - {in_loss}))",
        "",
        "",
    ]
    tape = [
        "with tf.GradientTape() as tape:",
        f"    loss = loss_fn(y, model(x{training})){extra}",
        "grads = tape.gradient(loss, model.trainable_variables)",
        "optimizer.apply_gradients(zip(grads, model.trainable_variables))",
    ]
    if style == "inline":
        loop_body = [*tape, "losses.append(float(loss))"]
    else:
        lines += [
            *(["@tf.function"] if style == "decorated step" else []),
            "def train_step(model, optimizer, x, y):",
            *("    " + line for line in tape),
            "    return loss",
            "",
            "",
        ]
        loop_body = ["loss = train_step(model, optimizer, x, y)", "losses.append(float(loss))"]
    lines += [
        "def fit(model, optimizer, dataset):",
        "    losses = []",
        "    for x, y in dataset:",
        *("        " + line for line in loop_body),
        "    return sum(losses) / len(losses)",
    ]
    return "\n".join(lines) + "\n"


@FUZZ
@given(training_loops(), st.booleans())
def test_fuzz_training_loops(source: str, unsafe: bool) -> None:
    """Fixes that decorate a step, extract one from a loop, or move or remove
    a loss's decorator change what runs traced: one `fix` still reaches the
    fixed point, and `check` counts what it fixes."""
    check_properties(source, unsafe=unsafe)


# -- the known failures, minimal, so they stay visible until fixed ----------------------

ELIF_CHAIN = """\
import tensorflow as tf


@tf.function
def loss(y_true, y_pred):
    if tf.reduce_mean(y_pred) > 0:
        a = 1.0
    elif tf.reduce_mean(y_pred) > 0:
        a = 2.0
    else:
        a = 3.0
    return a
"""


NESTED_ELIF = """\
import tensorflow as tf


@tf.function
def loss(y_true, y_pred):
    if tf.reduce_mean(y_pred) > 0:
        a = 1.0
    else:
        if y_pred.shape[0] > 1:
            a = 2.0
        elif tf.reduce_mean(y_pred) > 1:
            a = 3.0
        else:
            a = 4.0
    return a
"""


def test_nested_elif_does_not_crash() -> None:
    check_properties(NESTED_ELIF, unsafe=False)
    check_properties(NESTED_ELIF, unsafe=True)


# A traced function that is not a loss (a loss decorated itself is TFR301's).
CASCADE_IN_A_STEP = """\
import numpy as np
import tensorflow as tf


@tf.function
def forward(x):
    if tf.reduce_mean(x) > 0:
        a = 1.0
    else:
        a = np.random.normal(0.0, 1.0)
    return a
"""

ELIF_CHAIN_IN_A_STEP = """\
import tensorflow as tf


@tf.function
def forward(x):
    if tf.reduce_mean(x) > 0:
        a = x
    elif tf.reduce_mean(x) > -1:
        a = x * 2.0
    else:
        a = x * 3.0
    return a
"""

CASCADE = """\
import numpy as np
import tensorflow as tf


@tf.function
def loss(y_true, y_pred):
    if tf.reduce_mean(y_pred) > 0:
        a = 1.0
    else:
        a = np.random.normal(0.0, 1.0)
    return a
"""


_NAMES = ["cascade", "cascade-in-a-step", "elif-chain", "elif-chain-in-a-step"]


def _fixable(result: FileResult, unsafe: bool) -> int:
    applicable = {"safe", "unsafe"} if unsafe else {"safe"}
    return sum(1 for f in result.findings if f.fix and f.fix.applicability.value in applicable)


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize(
    "source", [CASCADE, CASCADE_IN_A_STEP, ELIF_CHAIN, ELIF_CHAIN_IN_A_STEP], ids=_NAMES
)
def test_fixable_count_is_what_fix_fixes(source: str, unsafe: bool) -> None:
    """A fix that unblocks another (the `np.random` call fixed, then the tensor
    `if` around it) and a chain fixed in two rounds (the `elif`, then the
    `if`): `check` counts the findings `fix` then resolves, and `fix` counts
    findings, not fix rounds."""
    checked = _run(source, fix=False, unsafe=unsafe)
    fixed = _run(source, fix=True, unsafe=unsafe)
    assert len(fixed.fixes_applied) == _fixable(checked, unsafe)


@pytest.mark.parametrize(
    "source", [CASCADE, CASCADE_IN_A_STEP, ELIF_CHAIN, ELIF_CHAIN_IN_A_STEP], ids=_NAMES
)
def test_more_with_unsafe_fixes_is_what_unsafe_fix_fixes(source: str) -> None:
    """Without `--unsafe-fixes`, the findings `check` offers a fix for (safe or
    unsafe) are those `fix --unsafe-fixes` fixes."""
    checked = _run(source, fix=False, unsafe=False)
    fixed = _run(source, fix=True, unsafe=True)
    assert len(fixed.fixes_applied) == sum(1 for f in checked.findings if f.fix)


def test_a_finding_fixed_by_another_fix_says_which() -> None:
    checked = _run(CASCADE_IN_A_STEP, fix=False, unsafe=True)
    by_line = {f.start.line: f for f in checked.findings}
    assert by_line[7].code == "TFR101" and by_line[7].fix is not None
    assert by_line[7].fix.message == "Fixed along with the fix on line 10"
    fixed = _run(CASCADE_IN_A_STEP, fix=True, unsafe=True)
    assert sorted(f.start.line for f in fixed.fixes_applied) == [7, 10]
    assert fixed.findings == []
    assert "tf.cond(" in (fixed.fixed_source or "")


# TFR306's rewrite (weights per batch) is judged again by TFR306, and found
# weighted: the finding whose fix was applied counts as fixed, in `check` and
# in `fix` alike, and none is left.
AVERAGE_PER_BATCH = """\
import tensorflow as tf


def psnr(a, b):
    return tf.image.psnr(a, b, max_val=255)


def evaluate(model, dataset):
    psnr_values = []
    for lr, hr in dataset:
        sr = model(lr)
        psnr_value = psnr(hr, sr)[0]
        psnr_values.append(psnr_value)
    return tf.reduce_mean(psnr_values)
"""


def test_a_finding_whose_fix_was_applied_counts_as_fixed() -> None:
    checked = _run(AVERAGE_PER_BATCH, fix=False, unsafe=True)
    fixed = _run(AVERAGE_PER_BATCH, fix=True, unsafe=True)
    assert [(f.code, f.start.line) for f in fixed.fixes_applied] == [("TFR306", 14)]
    assert len(fixed.fixes_applied) == _fixable(checked, unsafe=True) == 1
    assert fixed.findings == []
