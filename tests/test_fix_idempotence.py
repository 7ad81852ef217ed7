"""One `fix` reaches the fixed point, also when a fix changes what runs traced.

A fix can make code traced (a train step decorated, or extracted from a loop
and decorated) or stop it running traced (a loss's `@tf.function` removed).
The fix rounds derive the traced functions, and the rules that can fire, again
after every round, so what the first round made traced is fixed (or reported)
in the same run, and a second `fix` changes nothing. `check` counts what `fix`
then fixes.
"""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.findings import FileResult
from tfrewrite.pipeline.engine import InputFile, RunOptions
from tfrewrite.pipeline.fix_rounds import _reindex
from tfrewrite.pipeline.rule_pass import FileJob, process_file
from tfrewrite.rules import select_rules

CODES = tuple(r.code for r in select_rules(["TFR"], []))
PATH = "train.py"


def _run(
    source: str, fix: bool, unsafe: bool, ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
) -> FileResult:
    index = build_index(source, PATH, "train")
    options = RunOptions(
        rule_codes=CODES, root=".", fix=fix, unsafe_fixes=unsafe, per_file_ignores=ignores
    )
    traced = compute_facts([index]).for_path(PATH)
    result = process_file(FileJob(InputFile(PATH, source), index, traced, options))
    assert result.error is None, result.error.describe()
    return result


def _fixable(result: FileResult, unsafe: bool) -> int:
    applicable = {"safe", "unsafe"} if unsafe else {"safe"}
    return sum(1 for f in result.findings if f.fix and f.fix.applicability.value in applicable)


def _fix_once(source: str, unsafe: bool, **kwargs: object) -> FileResult:
    """`fix` once: a second `fix` changes nothing, and `check` counted what
    the first one fixed."""
    checked = _run(source, fix=False, unsafe=unsafe, **kwargs)  # type: ignore[arg-type]
    fixed = _run(source, fix=True, unsafe=unsafe, **kwargs)  # type: ignore[arg-type]
    assert len(fixed.fixes_applied) == _fixable(checked, unsafe)
    result = fixed.fixed_source or source
    again = _run(result, fix=True, unsafe=unsafe, **kwargs)  # type: ignore[arg-type]
    assert again.fixed_source in (None, result), again.fixed_source
    return fixed


# A tape block inline in a loop: the step extracted from it is a plain
# `tf.function` the loop calls with each batch, so the static shape in it is
# the batch's (`facts/trace_shapes.py`): nothing to fix there.
SHAPE_IN_INLINE_STEP = textwrap.dedent(
    """\
    import tensorflow as tf


    def train(model, optimizer, dataset, bias):
        for x, y in dataset:
            with tf.GradientTape() as tape:
                h = model(x, training=True) + tf.broadcast_to(bias, (x.shape[0], 4))
                loss = tf.reduce_mean(tf.square(y - h))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
)

# A helper that only the extracted step makes traced draws with NumPy: the
# draw (TFR102) is fixed in the same run.
RANDOM_IN_HELPER_OF_INLINE_STEP = textwrap.dedent(
    """\
    import numpy as np
    import tensorflow as tf


    def jitter(x):
        return x * np.random.uniform(0.9, 1.1)


    def train(model, optimizer, dataset):
        for x, y in dataset:
            with tf.GradientTape() as tape:
                h = model(jitter(x), training=True)
                loss = tf.reduce_mean(tf.square(y - h))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
)


def test_a_step_extracted_from_a_loop_reads_whole_shapes() -> None:
    fixed = _fix_once(SHAPE_IN_INLINE_STEP, unsafe=True)
    assert "    @tf.function\n    def train_step(x, y):" in (fixed.fixed_source or "")
    assert "(x.shape[0], 4)" in (fixed.fixed_source or "")
    assert fixed.findings == []


def test_a_helper_an_extracted_step_calls_is_checked_as_traced_in_the_same_run() -> None:
    fixed = _fix_once(RANDOM_IN_HELPER_OF_INLINE_STEP, unsafe=True)
    assert "x * tf.random.uniform([], minval=0.9, maxval=1.1)" in (fixed.fixed_source or "")
    assert fixed.findings == []


def test_rules_a_round_brings_in_respect_per_file_ignores() -> None:
    ignores = ((PATH, ("TFR102",)),)
    fixed = _fix_once(RANDOM_IN_HELPER_OF_INLINE_STEP, unsafe=True, ignores=ignores)
    assert "def train_step(x, y):" in (fixed.fixed_source or "")
    assert "np.random.uniform(0.9, 1.1)" in (fixed.fixed_source or "")


# A Python side effect in a helper that the extracted step makes traced: no
# fix can keep it per call, so the run reports it.
SIDE_EFFECT_IN_HELPER_OF_INLINE_STEP = textwrap.dedent(
    """\
    import tensorflow as tf

    SEEN = []


    def penalty(x):
        SEEN.append(x)
        return tf.reduce_mean(x)


    def train(model, optimizer, dataset):
        for x, y in dataset:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(y - model(x, training=True))) + penalty(x)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
)


def test_what_an_extracted_step_makes_traced_and_no_fix_can_keep_is_reported() -> None:
    fixed = _fix_once(SIDE_EFFECT_IN_HELPER_OF_INLINE_STEP, unsafe=True)
    assert "def train_step(x, y):" in (fixed.fixed_source or "")
    assert [f.code for f in fixed.findings] == ["TFR202"]


# A step called from a loop (TFR302) and a helper it calls: the helper is
# checked as the traced code it becomes, in the same run.
RANDOM_IN_HELPER_OF_A_STEP = textwrap.dedent(
    """\
    import random

    import tensorflow as tf


    def noisy(x):
        return x * random.random()


    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - noisy(model(x, training=True))))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    def fit(model, optimizer, dataset):
        for x, y in dataset:
            train_step(model, optimizer, x, y)
    """
)


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_a_decorated_step_never_leaves_a_trace_time_constant(unsafe: bool) -> None:
    fixed = _fix_once(RANDOM_IN_HELPER_OF_A_STEP, unsafe=unsafe)
    result = fixed.fixed_source or RANDOM_IN_HELPER_OF_A_STEP
    if unsafe:
        assert "@tf.function" in result and "random.random()" not in result
    else:
        # The sample's fix is unsafe: the step stays eager with it.
        assert result == RANDOM_IN_HELPER_OF_A_STEP
        assert {f.code for f in fixed.findings} == {"TFR106", "TFR302"}


# A loss decorated on its own reads a module flag through a helper: removing
# the decorator (TFR301) leaves nothing traced, so the frozen flag (TFR201)
# is resolved along with it, and later rounds see the loss as eager.
FLAG_IN_A_DECORATED_LOSS = textwrap.dedent(
    """\
    import tensorflow as tf

    SCALE = 1.0


    def set_scale(value):
        global SCALE
        SCALE = value


    def scaled(x):
        return x * SCALE


    @tf.function
    def loss_fn(labels, logits):
        return tf.reduce_mean(tf.square(labels - scaled(logits))) / SCALE
    """
)


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_a_loss_whose_decorator_is_removed_is_eager_in_later_rounds(unsafe: bool) -> None:
    checked = _run(FLAG_IN_A_DECORATED_LOSS, fix=False, unsafe=unsafe)
    by_code = {f.code: f for f in checked.findings}
    assert by_code["TFR201"].fix is not None
    assert by_code["TFR201"].fix.message == "Fixed along with the fix on line 15"
    fixed = _fix_once(FLAG_IN_A_DECORATED_LOSS, unsafe=unsafe)
    assert sorted(f.code for f in fixed.fixes_applied) == ["TFR201", "TFR201", "TFR301"]
    assert fixed.findings == []


def test_reindex_drops_what_only_a_removed_decorator_traced() -> None:
    index = build_index(FLAG_IN_A_DECORATED_LOSS, PATH, "train")
    traced = compute_facts([index]).for_path(PATH)
    assert {"loss_fn", "scaled"} <= set(traced)
    undecorated = FLAG_IN_A_DECORATED_LOSS.replace("@tf.function\n", "")
    _, now = _reindex(undecorated, index, traced)
    assert "loss_fn" not in now and "scaled" not in now


def test_reindex_keeps_what_another_module_traces() -> None:
    step = textwrap.dedent(
        """\
        import tensorflow as tf

        from train import loss_fn


        @tf.function
        def train_step(model, x, y):
            return loss_fn(y, model(x))
        """
    )
    index = build_index(FLAG_IN_A_DECORATED_LOSS, PATH, "train")
    other = build_index(step, "step.py", "step")
    traced = compute_facts([index, other]).for_path(PATH)
    assert not traced["loss_fn"].local_reasons_only
    undecorated = FLAG_IN_A_DECORATED_LOSS.replace("@tf.function\n", "")
    _, now = _reindex(undecorated, index, traced)
    assert {"loss_fn", "scaled"} <= set(now)


# TFR306's rewrite, a sum weighted by batch size over the sum of the sizes,
# is no finding of its own.
AVERAGE_PER_BATCH = textwrap.dedent(
    """\
    def evaluate(model, batches):
        batch_losses = []
        for x, y in batches:
            batch_losses.append(float(loss_fn(y, model(x))))
        return sum(batch_losses) / len(batch_losses)
    """
)


def test_the_weighted_average_tfr306_writes_is_a_fixed_point() -> None:
    fixed = _fix_once("import tensorflow as tf\n\n\n" + AVERAGE_PER_BATCH, unsafe=True)
    assert "/ sum(batch_sizes)" in (fixed.fixed_source or "")
    assert fixed.findings == []


# The inner `elif` has a safe fix, but the `if` around it is refused until
# its `print` is fixed (unsafe): without `--unsafe-fixes` the function is
# left whole, so the inner fix is offered as unsafe, applied with the others.
PRINT_AROUND_AN_ELIF = textwrap.dedent(
    """\
    import keras
    import tensorflow as tf


    def loss(y_true, y_pred):
        a = 0.0
        if tf.reduce_mean(y_pred) > 0:
            print("loss", y_pred)
        elif tf.reduce_mean(y_true) > 0:
            a = 1.0
        else:
            a = 2.0
        return tf.reduce_mean(y_true - y_pred) + a


    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(loss=loss)
    """
)


def test_a_safe_fix_applied_only_with_unsafe_ones_is_offered_as_unsafe() -> None:
    checked = _run(PRINT_AROUND_AN_ELIF, fix=False, unsafe=False)
    assert _fixable(checked, unsafe=False) == 0
    inner = next(f for f in checked.findings if f.start.line == 8)
    assert inner.fix is not None and inner.fix.applicability.value == "unsafe"
    fixed = _fix_once(PRINT_AROUND_AN_ELIF, unsafe=False)
    assert fixed.fixed_source is None
    unsafe_fixed = _fix_once(PRINT_AROUND_AN_ELIF, unsafe=True)
    assert len(unsafe_fixed.fixes_applied) == sum(1 for f in checked.findings if f.fix) == 3


# The loss's own decorator traces the helper, which reads a module flag
# another function rebinds (TFR201), and an eager loop's tape calls the loss.
# TFR301 removes the decorator, and the tape block is extracted (TFR303):
# the helper's finding is no reason to refuse the extraction in the first
# run, for a run on the fixed file sees no reason to trace the helper but
# the step, and would extract it then.
FLAG_IN_A_HELPER_OF_A_DECORATED_LOSS_IN_AN_EAGER_LOOP = FLAG_IN_A_DECORATED_LOSS + textwrap.dedent(
    """\


    def fit(model, optimizer, dataset):
        for x, y in dataset:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
)


def test_a_step_is_gated_alike_before_and_after_its_losss_decorator_goes() -> None:
    fixed = _fix_once(FLAG_IN_A_HELPER_OF_A_DECORATED_LOSS_IN_AN_EAGER_LOOP, unsafe=True)
    assert "TFR303" in {f.code for f in fixed.fixes_applied}


# Two averages of one per-batch list: the first fix makes the loop record
# the batch sizes, and the next round weights the second average with them.
TWO_AVERAGES = textwrap.dedent(
    """\
    import numpy as np
    import tensorflow as tf


    @tf.function
    def eval_step(model, x, y):
        return tf.reduce_mean(tf.square(model(x) - y))


    def evaluate(model, dataset, epoch):
        losses = []
        for x, y in dataset.batch(32):
            losses.append(float(eval_step(model, x, y)))
        print("loss", np.mean(losses))
        tf.summary.scalar("loss", np.mean(losses), step=epoch)
    """
)


def test_each_average_of_a_per_batch_list_is_fixed_in_one_run() -> None:
    fixed = _fix_once(TWO_AVERAGES, unsafe=True)
    source = fixed.fixed_source or ""
    assert source.count("np.average(losses, weights=batch_sizes)") == 2
    assert source.count("batch_sizes.append(len(x))") == 1
    assert [f.code for f in fixed.fixes_applied] == ["TFR306", "TFR306"]
