"""The shared analysis on the patterns real TensorFlow code contains: which
functions run traced, which values are proven or likely tensors, which are
Python numbers, and idiomatic code that must stay free of findings."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tfrewrite.api import check_source
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.facts.tensors import Strength
from tfrewrite.facts.walk import iter_nodes
from tfrewrite.findings import Applicability


def context(source: str, path: str = "example.py") -> RuleContext:
    source = textwrap.dedent(source)
    index = build_index(source, path, "example")
    traced = compute_facts([index]).for_path(path)
    return RuleContext(path, cst.parse_module(source), index, traced)


def conditions(ctx: RuleContext, qualname: str) -> list[tuple[str, Strength, bool]]:
    """(test source, strength, proven scalar) of every `if`/`while` in a function."""
    scope = next(f for f in ctx.functions if f.qualname == qualname)
    facts = ctx.tensors(scope)
    result = []
    for node in iter_nodes(scope.node.body, into_functions=False):
        if isinstance(node, (cst.If, cst.While)):
            result.append(
                (ctx.code(node.test), facts.strength(node.test), facts.is_scalar_tensor(node.test))
            )
    return result


def codes(source: str, select: list[str] | None = None) -> list[tuple[str, int]]:
    findings = check_source(textwrap.dedent(source), select=select)
    return [(f.code, f.start.line) for f in findings]


# -- tensors: proven and likely ---------------------------------------------------------


def test_parameter_every_call_site_passes_a_scalar_constant_is_a_proven_scalar():
    ctx = context(
        """
        import tensorflow as tf

        @tf.function
        def f(x):
            if x > 0:
                return x
            return -x

        f(tf.constant(1))
        """
    )
    assert conditions(ctx, "f") == [("x > 0", Strength.PROVEN, True)]
    findings = check_source(
        textwrap.dedent(ctx.code(ctx.module)), select=["TFR101"], want_edits=False
    )
    assert [f.fix.applicability for f in findings] == [Applicability.SAFE]


def test_parameter_with_no_evidence_is_a_likely_tensor_never_a_proven_one():
    ctx = context(
        """
        import tensorflow as tf

        @tf.function
        def f(x, items):
            while tf.reduce_sum(x) > 1:
                x = x / 2
            if x > 0:
                x = -x
            for c in items:
                if c % 2 > 0:
                    x = x + c
            return x
        """
    )
    found = conditions(ctx, "f")
    assert found[0] == ("tf.reduce_sum(x) > 1", Strength.PROVEN, True)
    assert found[1][:2] == ("x > 0", Strength.LIKELY)
    assert found[2][:2] == ("c % 2 > 0", Strength.LIKELY)
    scope = next(f for f in ctx.functions if f.qualname == "f")
    facts = ctx.tensors(scope)
    test = cst.parse_expression("x > 0")
    assert not facts.is_tensor(test) and facts.likely.is_tensor(test)
    assert facts.assumptions(test) == ["x"]


@pytest.mark.parametrize(
    "test",
    [
        "x.shape[0] > 1",
        "x is None",
        "training",
        "self.use_bias",
        "len(x.shape) > 2",
        "mask is not None",
        "n > 0",
        "mode == 'train'",
        "num_classes > 2",
    ],
)
def test_likely_python_values_are_never_tensors(test):
    ctx = context(
        f"""
        import tensorflow as tf

        class Block(tf.keras.layers.Layer):
            def call(self, x, training=None, mask=None, mode="train", n=3, num_classes=10):
                if {test}:
                    return x
                return -x
        """
    )
    ((_, strength, _),) = conditions(ctx, "Block.call")
    assert strength is Strength.NONE


def test_parameters_used_as_python_values_are_not_likely_tensors():
    ctx = context(
        """
        import tensorflow as tf

        @tf.function
        def f(x, steps, config, flag):
            for _ in range(steps):
                x = x * config.scale
            if flag:
                x = -x
            if steps > 2:
                x = x + 1
            return x
        """
    )
    scope = next(f for f in ctx.functions if f.qualname == "f")
    assert ctx.tensors(scope).likely_params == {"x"}


def test_call_site_passing_a_python_value_makes_no_likely_tensor():
    ctx = context(
        """
        import tensorflow as tf

        @tf.function
        def step(x, scale):
            if scale > 1:
                return x * scale
            return x

        for i in range(3):
            step(tf.ones(3), 2.0)
        """
    )
    traced = ctx.traced["step"]
    assert traced.python_params == {"scale"} and "x" in traced.tensor_params
    assert [s for _, s, _ in conditions(ctx, "step")] == [Strength.NONE]


def test_a_nested_function_learns_from_the_calls_in_its_enclosing_function():
    """`_nms(class_id)` called with a `range` counter, in a loop or a
    comprehension, inside the traced function that defines it: a Python
    number, so `min(num_boxes - 1, class_id)` is Python's `min` on numbers
    (retinanet-tensorflow2.x's per-class NMS)."""
    source = """
        import tensorflow as tf

        class PerClass(tf.keras.layers.Layer):
            def _per_class(self, boxes):
                def _nms(class_id):
                    return boxes[:, min(num_boxes - 1, class_id), :]

                num_boxes = boxes.get_shape().as_list()[2]
                return [_nms(class_id) for class_id in range(self.num_classes)]

            def call(self, x):
                return self._per_class(x)

        def helper(k):
            return k

        class Other(tf.keras.layers.Layer):
            def helper(self, k):
                return k * 2

            def call(self, x):
                for i in range(3):
                    x = helper(x)
                return x
    """
    ctx = context(source)
    assert ctx.traced["PerClass._per_class._nms"].python_params == {"class_id"}
    # A method's plain-name call reaches the module's `helper`, not the method.
    assert "Other.helper" not in ctx.traced
    assert codes(source, ["TFR104"]) == []


def test_a_reduction_without_an_axis_passes_a_scalar():
    ctx = context(
        """
        import tensorflow as tf

        @tf.function
        def f(x):
            def show(y, z):
                return y + z

            loss = tf.reduce_mean(x)
            return show(loss, tf.reduce_sum(x, axis=0))
        """
    )
    traced = ctx.traced["f.show"]
    assert traced.scalar_params == {"y"} and traced.tensor_params == {"y", "z"}


def test_a_comprehension_counter_is_a_python_value_only_inside_it():
    ctx = context(
        """
        import tensorflow as tf

        @tf.function
        def f(x):
            def scaled(k):
                return x * k

            parts = [scaled(c) for c in range(3)]
            c = tf.reduce_sum(x)
            return parts, scaled(c)
        """
    )
    # One call passes a Python counter, the other a tensor: both are seen.
    traced = ctx.traced["f.scaled"]
    assert traced.python_params == {"k"}
    assert "k" not in traced.tensor_params


# -- tensors: what TensorFlow and Keras promise --------------------------------------------


@pytest.mark.parametrize(
    ("expression", "tensor", "scalar"),
    [
        ("tf.constant(True)", True, True),
        ("tf.shape(x)[0]", True, True),
        ("tf.shape(x)[1:]", True, False),
        ("tf.size(x) > 0", True, True),
        ("tf.cast(tf.size(x), tf.float32)", True, True),
        ("tf.reduce_max(x)", True, True),
        ("tf.keras.backend.mean(x)", True, False),
        ("ops.ndim(x) == 4", False, False),
        ("ops.shape(x)[-1] == 1", False, False),
        ("K.int_shape(x)[-1]", False, False),
        ("best > 0.5", True, True),
        ("best.read_value()", True, True),
        ("best", False, False),
        ("err < DELTA", True, True),
        ("EPS", True, True),
        ("loss_object(x, x)", True, True),
        ("per_example(x, x)", True, False),
        ("loss_object", False, False),
        ("tf.keras.losses.Loss()(x, x)", False, False),
    ],
)
def test_kinds_of_tensorflow_and_keras_results(expression, tensor, scalar):
    ctx = context(
        f"""
        import tensorflow as tf
        from keras import ops
        from tensorflow.keras import backend as K

        DELTA = 1.0
        EPS = tf.constant(1e-7)
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        per_example = tf.keras.losses.MeanSquaredError(reduction=None)

        @tf.function
        def f(x):
            best = tf.Variable(0.0)
            err = tf.reduce_mean(x)
            return {expression}
        """
    )
    scope = next(f for f in ctx.functions if f.qualname == "f")
    facts = ctx.tensors(scope)
    value = next(n for n in iter_nodes(scope.node.body) if isinstance(n, cst.Return)).value
    kind = facts.kind(value)
    assert (kind.tensor, kind.tensor and kind.scalar) == (tensor, scalar)


def test_module_constant_rebound_elsewhere_is_not_a_number():
    ctx = context(
        """
        import tensorflow as tf

        DELTA = 1.0

        @tf.function
        def f(x):
            err = tf.reduce_mean(x)
            if err < DELTA:
                return err
            return x

        def set_delta(value):
            global DELTA
            DELTA = value
        """
    )
    assert conditions(ctx, "f") == [("err < DELTA", Strength.PROVEN, False)]


def test_attribute_set_once_in_init_from_a_numeric_default_is_a_number():
    ctx = context(
        """
        import tensorflow as tf

        class Clipped(tf.keras.losses.Loss):
            def __init__(self, clip=1.0, name="clipped"):
                super().__init__(name=name)
                self.clip = clip
                self.counter = 0

            def call(self, y_true, y_pred):
                err = tf.reduce_mean(tf.abs(y_true - y_pred))
                if err > self.clip:
                    return self.clip * err
                return err

            def bump(self):
                self.clip = self.clip * 2
        """
    )
    # `bump` rebinds it: not a constant any more.
    assert conditions(ctx, "Clipped.call")[0][2] is False
    source = ctx.code(ctx.module).replace("self.clip = self.clip * 2", "pass")
    assert conditions(context(source), "Clipped.call")[0][2] is True


def test_keras_contracts_make_tensors():
    ctx = context(
        """
        import tensorflow as tf

        class Gate(tf.keras.layers.Layer):
            def call(self, inputs):
                if tf.reduce_sum(inputs) > 0:
                    return inputs
                return -inputs

        class Trainer(tf.keras.Model):
            def train_step(self, data):
                x, y = data
                if y > 0:
                    return {}
                return {}

        class Hits(tf.keras.metrics.Metric):
            def update_state(self, y_true, y_pred, sample_weight=None):
                if y_pred > 0:
                    pass
        """
    )
    assert ctx.traced["Gate.call"].tensor_params == {"inputs"}
    assert ctx.traced["Trainer.train_step"].tensor_params == {"data"}
    assert ctx.traced["Hits.update_state"].tensor_params == {"y_true", "y_pred"}
    assert conditions(ctx, "Trainer.train_step")[0][1] is Strength.PROVEN


def test_iteration_over_a_dataset_or_a_tensor_binds_tensors():
    ctx = context(
        """
        import tensorflow as tf

        @tf.function
        def f(x):
            ds = tf.data.Dataset.from_tensor_slices(x).batch(2)
            for batch in ds:
                if tf.reduce_sum(batch) > 0:
                    pass
            for i in tf.range(3):
                if i > 0:
                    pass
            for row in x:
                if row > 0:
                    pass
        """
    )
    strengths = [(s, scalar) for _, s, scalar in conditions(ctx, "f")]
    assert strengths == [
        (Strength.PROVEN, True),
        (Strength.PROVEN, True),
        (Strength.LIKELY, False),
    ]


def test_input_signature_makes_proven_scalars():
    ctx = context(
        """
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([], tf.float32), tf.TensorSpec([None])])
        def f(t, v):
            if t > 0:
                return v
            return -v
        """
    )
    traced = ctx.traced["f"]
    assert traced.tensor_params == {"t", "v"} and traced.scalar_params == {"t"}
    assert conditions(ctx, "f") == [("t > 0", Strength.PROVEN, True)]


# -- traced context ----------------------------------------------------------------------


def test_functions_handed_to_tracers_run_traced():
    ctx = context(
        """
        import functools

        import tensorflow as tf

        compiled = tf.function
        fast = functools.partial(tf.function, jit_compile=True)

        def preprocess(image, label):
            return image, label

        def keep(image, label):
            return True

        def double(v):
            return v * 2

        def scale(inputs):
            return inputs * 2

        def replica_step(x):
            return x

        @compiled
        def aliased(x):
            return x

        @fast
        def partial_decorated(x):
            return x

        @functools.partial(tf.function, reduce_retracing=True)
        def partial_inline(x):
            return x

        def run(strategy, images, labels, x):
            ds = tf.data.Dataset.from_tensor_slices((images, labels))
            ds = ds.map(preprocess).filter(keep)
            layer = tf.keras.layers.Lambda(scale)
            strategy.run(replica_step, args=(x,))
            return tf.map_fn(double, x)
        """
    )
    traced = ctx.traced
    for name in ("preprocess", "keep", "double", "scale", "replica_step"):
        assert name in traced, name
    assert traced["preprocess"].tensor_params == {"image", "label"}
    assert traced["scale"].tensor_params == {"inputs"}
    assert traced["replica_step"].likely_params == {"x"}
    for name in ("aliased", "partial_decorated", "partial_inline"):
        assert "decorated" in traced[name].reason, name
    assert ctx.index.functions["partial_decorated"].decorator_keywords["tensorflow.function"] == {
        "jit_compile": "True"
    }


def test_undecorated_step_inside_main_is_checked_as_pending_traced_code():
    source = """
        import tensorflow as tf


        def main():
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.1)
            best = tf.Variable(10.0)

            # @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                if best > loss:
                    best.assign(loss)
                return loss.numpy()

            for epoch in range(3):
                train_step(tf.ones((4, 2)), tf.zeros((4, 1)))
        """
    ctx = context(source)
    pending = ctx.traced["main.train_step"]
    assert pending.pending and "TFR302" in pending.reason
    scope = next(f for f in ctx.functions if f.qualname == "main.train_step")
    assert scope.traced is None and scope.runs_traced is pending
    found = codes(source)
    assert ("TFR302", 11) in found  # still reported as undecorated
    # The commented-out decorator keeps it eager: what it would do traced
    # (the tensor `if`, `.numpy()`) is no hazard of its own there.
    assert ("TFR101", 16) not in found and ("TFR105", 18) not in found


def test_loss_by_signature():
    ctx = context(
        """
        import tensorflow as tf

        @tf.function
        def dice(labels, logits):
            return tf.reduce_mean(labels * logits)

        @tf.function
        def scale(x, factor):
            return x * factor

        @tf.function
        def compute_accuracy(logits, labels):
            return tf.reduce_mean(tf.cast(tf.argmax(logits, -1) == labels, tf.float32))
        """
    )
    assert not ctx.traced["compute_accuracy"].loss_signature
    assert ctx.traced["dice"].loss_signature
    assert not ctx.traced["scale"].loss_signature
    assert not ctx.traced["dice"].is_loss  # nothing calls it as a loss


def test_module_name_written_from_another_module_is_rebound():
    config = build_index("LR = 0.1\n", "config.py", "config")
    train = build_index(
        "import config\n\ndef anneal():\n    config.LR = 0.01\n", "train.py", "train"
    )
    compute_facts([config, train])
    assert "LR" in config.rebound_module_names


# -- state hazards --------------------------------------------------------------------


def test_module_calls_are_not_container_mutations():
    source = """
        import numpy as np
        import tensorflow as tf
        from keras import ops
        from tensorflow.keras import backend as K

        @tf.function
        def f(x, v):
            K.update(v, x)
            return tf.add(x, 1) + tf.math.add(x, 2) + ops.add(x, 3) + np.add(1, 2)
        """
    assert codes(source, ["TFR202"]) == []


def test_container_on_self_mutated_in_traced_call_is_reported():
    source = """
        import tensorflow as tf

        class Logger(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.seen = []

            def call(self, inputs):
                self.seen.append(inputs)
                return inputs
        """
    assert codes(source, ["TFR202"]) == [("TFR202", 10)]


def test_variable_created_in_pending_step_is_reported():
    source = """
        import tensorflow as tf

        def train_step(model, optimizer, x):
            accuracy = tf.keras.metrics.Mean()
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            accuracy.update_state(loss)

        def fit(model, optimizer, batches):
            for x in batches:
                train_step(model, optimizer, x)
        """
    found = check_source(textwrap.dedent(source), select=["TFR204"])
    assert [(f.code, f.start.line) for f in found] == [("TFR204", 5)]
    assert "once it is decorated" in found[0].message


# -- idiomatic code stays clean --------------------------------------------------------------

IDIOMATIC = """
import tensorflow as tf
from tensorflow import keras


class Dense(keras.layers.Layer):
    def __init__(self, units=8, rate=0.01):
        super().__init__()
        self.units = units
        self.rate = rate

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units))
        self.bias = self.add_weight(shape=(self.units,), initializer="zeros")

    def call(self, inputs, training=None, mask=None):
        if mask is not None:
            inputs = inputs * tf.cast(mask, inputs.dtype)
        if inputs.shape.rank > 2:
            inputs = tf.reshape(inputs, [-1, inputs.shape[-1]])
        if training:
            inputs = tf.nn.dropout(inputs, self.rate)
        self.add_loss(self.rate * tf.reduce_sum(tf.square(self.kernel)))
        return tf.matmul(inputs, self.kernel) + self.bias


class Model(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = Dense()
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}


@tf.function
def cumulative(x):
    values = tf.TensorArray(tf.float32, size=tf.shape(x)[0])
    total = tf.constant(0.0)
    for i in tf.range(tf.shape(x)[0]):
        total += x[i]
        values = values.write(i, total)
    return values.stack()


@tf.function
def unrolled(x):
    parts = []
    for i in range(3):
        parts.append(x * float(i))
    if len(parts) > 2:
        parts = parts[:2]
    return tf.add_n(parts)


def preprocess(image, label):
    image = tf.cast(image, tf.float32) / 255.0
    if image.shape.rank == 2:
        image = image[..., None]
    return image, label


def make_dataset(images, labels):
    return tf.data.Dataset.from_tensor_slices((images, labels)).map(preprocess).batch(32)
"""


def test_idiomatic_tf2_and_keras_code_has_no_finding():
    assert codes(IDIOMATIC) == []
