"""A train step that builds or calls an object of a plain Python class of the
project: the class's `__init__` or `__call__` runs once, at trace time, on
symbolic tensors, and no rule checks it as traced code. Decorating the step
is then an unsafe fix that says why, never a safe one. A Keras class of the
project, built or called the same way, keeps the safe fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.findings import Applicability
from tfrewrite.pipeline.engine import InputFile, RunOptions, run

DECODER = """
    import numpy as np
    import tensorflow as tf


    class Decoder:
        def __init__(self, rows):
            self.rows = [rows[i].numpy().decode() for i in range(rows.shape[0])]

        def values(self):
            table = np.array([[float(v) for v in r.split()] for r in self.rows], np.float32)
            return tf.constant(table[:, :2]), tf.constant(table[:, 2:])

        def __call__(self, rows):
            return Decoder(rows).values()
"""

STEP = """
    import tensorflow as tf
    {import_line}

    net = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    sgd = tf.keras.optimizers.SGD(0.1)
    {module_line}

    def fit_batch(rows):
        features, labels = {call}
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((net(features, training=True) - labels) ** 2)
        grads = tape.gradient(loss, net.trainable_variables)
        sgd.apply_gradients(zip(grads, net.trainable_variables))
        return loss

    for batch in tf.data.Dataset.from_tensor_slices(["1 2 3", "4 5 6"]).batch(1):
        fit_batch(batch)
"""


def _step_fix(tmp_path: Path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    result = run(
        [InputFile(str(tmp_path / n)) for n in files],
        RunOptions(rule_codes=("TFR302",), root=str(tmp_path), unsafe_fixes=True),
        jobs=1,
    )
    (step,) = result.findings
    return step.fix


def _files(call: str, *, module_line: str = "", in_one_file: bool = False) -> dict[str, str]:
    if in_one_file:
        step = STEP.format(import_line="", module_line=module_line, call=call)
        return {"train.py": DECODER + step.replace("import tensorflow as tf\n", "", 1)}
    step = STEP.format(
        import_line="from decoding import Decoder", module_line=module_line, call=call
    )
    return {"train.py": step, "decoding.py": DECODER}


def test_an_object_of_a_plain_class_from_another_module_makes_the_decoration_unsafe(
    tmp_path: Path,
) -> None:
    fix = _step_fix(tmp_path, _files("Decoder(rows).values()"))
    assert fix is not None and fix.applicability is Applicability.UNSAFE
    assert "it calls `Decoder(...)` (`Decoder.__init__`), Python code that would run once" in (
        fix.message
    )


def test_a_module_instance_called_in_the_step_runs_its_class_call_method(
    tmp_path: Path,
) -> None:
    files = _files("decode(rows)", module_line="decode = Decoder([])")
    fix = _step_fix(tmp_path, files)
    assert fix is not None and fix.applicability is Applicability.UNSAFE
    assert "`decode(...)` (`Decoder.__call__`)" in fix.message


MAIN_BLOCK_STEP = """
    import tensorflow as tf
    from decoding import Decoder

    if __name__ == "__main__":
        net = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        sgd = tf.keras.optimizers.SGD(0.1)
        decode = Decoder([])

        def fit_batch(rows):
            features, labels = decode(rows)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((net(features, training=True) - labels) ** 2)
            grads = tape.gradient(loss, net.trainable_variables)
            sgd.apply_gradients(zip(grads, net.trainable_variables))

        for batch in tf.data.Dataset.from_tensor_slices(["1 2 3", "4 5 6"]).batch(1):
            fit_batch(batch)
"""


def test_an_object_the_main_block_builds_is_a_module_object(tmp_path: Path) -> None:
    """The `__main__` block binds module globals: `decode` there is a
    `Decoder`, whose `__call__` the decorated step would run once at trace
    time (here it calls `.numpy()`: the decorated step would raise)."""
    fix = _step_fix(tmp_path, {"train.py": MAIN_BLOCK_STEP, "decoding.py": DECODER})
    assert fix is not None and fix.applicability is Applicability.UNSAFE
    assert "`decode(...)` (`Decoder.__call__`)" in fix.message


def test_an_object_either_branch_may_build_counts_with_each_class(tmp_path: Path) -> None:
    """`decode` is a `Decoder` in one branch and a Keras layer in the other:
    the step may call `Decoder.__call__`, so decorating it is not proven."""
    step = MAIN_BLOCK_STEP.replace(
        "        decode = Decoder([])\n",
        "        if net.layers:\n"
        "            decode = Decoder([])\n"
        "        else:\n"
        "            decode = tf.keras.layers.Identity()\n",
    )
    assert step != MAIN_BLOCK_STEP
    fix = _step_fix(tmp_path, {"train.py": step, "decoding.py": DECODER})
    assert fix is not None and fix.applicability is Applicability.UNSAFE
    assert "`decode(...)` (`Decoder.__call__`)" in fix.message


def test_an_object_built_and_used_in_one_expression_in_the_same_file(tmp_path: Path) -> None:
    fix = _step_fix(tmp_path, _files("Decoder(rows).values()", in_one_file=True))
    assert fix is not None and fix.applicability is Applicability.UNSAFE
    assert "`Decoder(...)` (`Decoder.__init__`)" in fix.message


KERAS_BLOCK = """
    import tensorflow as tf


    class Block(tf.keras.layers.Layer):
        def call(self, x):
            return tf.nn.relu(x)
"""

KERAS_STEP = """
    import tensorflow as tf
    from blocks import Block

    net = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    sgd = tf.keras.optimizers.SGD(0.1)
    act = Block()

    def fit_batch(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((act(net(x, training=True)) - y) ** 2)
        grads = tape.gradient(loss, net.trainable_variables)
        sgd.apply_gradients(zip(grads, net.trainable_variables))
        return loss

    for x, y in tf.data.Dataset.from_tensor_slices((tf.ones((4, 3)), tf.ones((4, 1)))).batch(2):
        fit_batch(x, y)
"""


def test_a_keras_layer_of_another_module_called_in_the_step_keeps_the_safe_fix(
    tmp_path: Path,
) -> None:
    fix = _step_fix(tmp_path, {"train.py": KERAS_STEP, "blocks.py": KERAS_BLOCK})
    assert fix is not None and fix.applicability is Applicability.SAFE


ROW_LOSS_STEP = """
    import tensorflow as tf


    class RowLoss:
        def __call__(self, pred, target):
            rows = pred.shape[0]
            diff = tf.reshape(pred, (rows, -1)) - tf.reshape(target, (rows, -1))
            return tf.reduce_mean(diff**2)


    loss_fn = RowLoss()
    net = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    sgd = tf.keras.optimizers.SGD(0.1)

    def fit_batch(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(net(x, training=True), y)
        grads = tape.gradient(loss, net.trainable_variables)
        sgd.apply_gradients(zip(grads, net.trainable_variables))
        return loss

    for x, y in tf.data.Dataset.from_tensor_slices((tf.ones((5, 3)), tf.zeros((5, 2)))).batch(2):
        fit_batch(x, y)
"""


def test_a_loss_object_reading_the_batch_dimension_keeps_a_trace_per_batch_size(
    tmp_path: Path,
) -> None:
    """`loss_fn(...)` runs `RowLoss.__call__`, which reads `pred.shape[0]`: with
    `reduce_retracing=True` the short last batch would be traced with a `None`
    batch size and `tf.reshape` would fail, so the decorator is a plain one."""
    fix = _step_fix(tmp_path, {"train.py": ROW_LOSS_STEP})
    assert fix is not None and fix.applicability is Applicability.UNSAFE
    assert fix.message.startswith("Decorate `fit_batch` with `@tf.function` (unsafe")


FLIPPER = """
    import numpy as np
    import tensorflow as tf


    class Flipper:
        def flip_batch(self, batch):
            return tf.stack([np.flip(row.numpy(), 0) for row in batch])
"""

CLOSURE_STEP = """
    import tensorflow as tf
    from flipping import Flipper


    def train(data):
        net = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        sgd = tf.keras.optimizers.SGD(0.1)
        flipper = Flipper()

        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((net(flipper.flip_batch(x), training=True) - y) ** 2)
            grads = tape.gradient(loss, net.trainable_variables)
            sgd.apply_gradients(zip(grads, net.trainable_variables))

        for x, y in data:
            step(x, y)
"""


def test_a_method_of_an_object_the_enclosing_function_builds_from_another_module_blocks(
    tmp_path: Path,
) -> None:
    """`flipper = Flipper()` around the step, its class in another module:
    the method runs once, at trace time, on symbolic tensors, as a method of
    a plain class of the step's own module does."""
    for name, text in {"train.py": CLOSURE_STEP, "flipping.py": FLIPPER}.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    result = run(
        [InputFile(str(tmp_path / n)) for n in ("train.py", "flipping.py")],
        RunOptions(rule_codes=("TFR302",), root=str(tmp_path), unsafe_fixes=True),
        jobs=1,
    )
    (step,) = result.findings
    assert step.fix is None
    assert "calls `flipper.flip_batch(...)`, a method of the Python class `Flipper`" in (
        step.message
    )
