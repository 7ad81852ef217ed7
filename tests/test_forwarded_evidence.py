"""Call-site evidence through model objects and through parameters.

`net(xb, counter)` on `net = Net()` (a module-level object, one a class
holds in `self.net`, or a local one) calls `Net.call` (a Keras model's;
`__call__` for a plain class) with `self` bound, and tells it what it
passes. A call that passes on its caller's own parameter (`scaled_noise(h,
step)` in `Net.call`) passes what the caller receives there. With both,
`float(step + 1)` in `scaled_noise` is a host read of a tensor (TFR105); and
an extraction or decoration of a step that reaches it is refused, naming the
line and the function that would fail."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source
from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.facts.traced_function import TracedFunction, tape_block_context


def _traced(source: str) -> dict[str, TracedFunction]:
    index = build_index(textwrap.dedent(source), "m.py", "m")
    return compute_facts([index]).for_path("m.py")


def _codes(source: str) -> list[tuple[str, int]]:
    return sorted((f.code, f.start.line) for f in check_source(textwrap.dedent(source)))


MODEL = """\
import tensorflow as tf
from tensorflow import keras


def scaled_noise(h, step, total):
    frac = float(step + 1) / float(total)
    return h * (1.0 - 0.1 * frac)


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2)

    def call(self, x, step=None, training=False):
        return scaled_noise(self.dense(x), step, 100)
"""

# The step already traced: `counter`, a module variable, reaches `float()`.
TRACED_STEP = (
    MODEL
    + """

net, opt = Net(), keras.optimizers.SGD(0.1)
counter = tf.Variable(0)


@tf.function
def train_step(xb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(net(xb, counter, training=True) ** 2)
    grads = tape.gradient(loss, net.trainable_variables)
    opt.apply_gradients(zip(grads, net.trainable_variables))
"""
)


def test_a_variable_passed_to_a_module_model_reaches_its_helper_as_a_tensor() -> None:
    traced = _traced(TRACED_STEP)
    assert "step" in traced["Net.call"].tensor_params
    assert "step" in traced["scaled_noise"].tensor_params
    assert "step" in traced["scaled_noise"].scalar_params
    assert "total" in traced["scaled_noise"].python_params


def test_float_of_the_forwarded_tensor_is_a_host_read() -> None:
    assert _codes(TRACED_STEP) == [("TFR105", 6)]


def test_a_python_int_through_the_same_chain_stays_clean() -> None:
    source = TRACED_STEP.replace("net(xb, counter, training=True)", "net(xb, 3, training=True)")
    traced = _traced(source)
    assert "step" in traced["Net.call"].python_params
    assert "step" in traced["scaled_noise"].python_params
    assert "step" not in traced["scaled_noise"].tensor_params
    assert _codes(source) == []


def test_a_parameter_the_caller_rebinds_is_not_forwarded() -> None:
    source = TRACED_STEP.replace(
        "        return scaled_noise(self.dense(x), step, 100)",
        "        step = 3\n        return scaled_noise(self.dense(x), step, 100)",
    )
    index = build_index(source, "m.py", "m")
    site = next(s for s in index.call_sites if s.callee == "m.scaled_noise")
    assert site.forwarded == ()
    traced = compute_facts([index]).for_path("m.py")
    assert "step" in traced["Net.call"].tensor_params  # what `net(...)` passes
    assert "step" not in traced["scaled_noise"].tensor_params  # but `call` passes 3
    assert _codes(source) == []


def test_a_parameter_rebound_after_the_call_is_not_forwarded_either() -> None:
    source = TRACED_STEP.replace(
        "        return scaled_noise(self.dense(x), step, 100)",
        "        out = scaled_noise(self.dense(x), step, 100)\n"
        "        step = None\n"
        "        return out",
    )
    index = build_index(source, "m.py", "m")
    site = next(s for s in index.call_sites if s.callee == "m.scaled_noise")
    assert site.forwarded == ()


def test_call_sites_record_the_forwarded_parameters_by_position_and_keyword() -> None:
    source = """
    def outer(a, b, *, c=None):
        inner(a, 1, k=b, j=c)
        inner(*a, b)
    """
    index = build_index(textwrap.dedent(source), "m.py", "m")
    first, second = (s for s in index.call_sites if s.callee == "inner")
    assert first.forwarded == (("0", "a", "outer"), ("k", "b", "outer"), ("j", "c", "outer"))
    assert second.forwarded == ()  # after `*a`, positions are unknown


def test_an_object_a_class_holds_calls_its_models_call() -> None:
    source = (
        MODEL
        + """

class Trainer:
    def __init__(self):
        self.net = Net()

    @tf.function
    def step(self, xb):
        return self.net(xb, tf.constant(2))
"""
    )
    traced = _traced(source)
    assert "step" in traced["Net.call"].tensor_params
    assert "step" in traced["scaled_noise"].tensor_params
    assert _codes(source) == [("TFR105", 6)]


def test_a_local_object_calls_its_models_call() -> None:
    source = (
        MODEL
        + """

@tf.function
def run(xb):
    net = Net()
    return net(xb, tf.constant(2))
"""
    )
    traced = _traced(source)
    assert "step" in traced["scaled_noise"].tensor_params


def test_a_parameter_named_like_the_module_object_is_not_that_object() -> None:
    source = (
        MODEL
        + """

net = Net()


@tf.function
def run(net, xb):
    return net(xb, tf.constant(2))
"""
    )
    traced = _traced(source)
    assert "step" not in traced["Net.call"].tensor_params
    assert "step" not in traced["scaled_noise"].tensor_params


def test_a_plain_objects_call_is_its_dunder_call() -> None:
    source = """
    import tensorflow as tf


    class Scale:
        @tf.function
        def __call__(self, h, k):
            return h * k


    scale = Scale()
    scale(tf.ones(3), tf.constant(2.0))
    """
    traced = _traced(source)
    assert traced["Scale.__call__"].tensor_params == {"h", "k"}


def test_forwarding_through_a_recursion_ends() -> None:
    source = """
    import tensorflow as tf


    @tf.function
    def walk(x, depth):
        if depth > 0:
            return walk(x, depth - 1)
        return helper(x)


    @tf.function
    def helper(x):
        return x


    walk(tf.ones(3), 2)
    """
    traced = _traced(source)
    assert "x" in traced["walk"].likely_params
    assert "x" not in traced["helper"].tensor_params  # `walk`'s own call is no tensor


def test_the_call_a_module_tape_block_makes_gives_its_targets_that_context() -> None:
    source = (
        MODEL
        + """

net, opt = Net(), keras.optimizers.SGD(0.1)
counter = tf.Variable(0)
for xb in tf.data.Dataset.from_tensor_slices(tf.ones((8, 3))).batch(4):
    counter.assign_add(1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(net(xb, counter, training=True) ** 2)
    grads = tape.gradient(loss, net.trainable_variables)
    opt.apply_gradients(zip(grads, net.trainable_variables))
"""
    )
    index = build_index(source, "m.py", "m")
    assert index.tape_block_calls == {23: ["m.Net()"]}
    traced = compute_facts([index]).for_path("m.py")
    context = tape_block_context(index, 23)
    assert context == "runs in the eager loop of the `GradientTape` at m.py:23"
    assert context in traced["Net.call"].contexts
    assert context in traced["scaled_noise"].contexts
    assert traced["scaled_noise"].runs_in_an_eager_loop


# -- the decoration gate ----------------------------------------------------------------

LOGGED = """\
import logging

import tensorflow as tf
from tensorflow import keras


def scaled_noise(h, step, total):
    logging.info("step %s", step)
    return h * (1.0 - 0.1 * step / total)


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2)

    def call(self, x, step=None, training=False):
        return scaled_noise(self.dense(x), step, 100)


net, opt = Net(), keras.optimizers.SGD(0.1)
counter = tf.Variable(0.0)
"""

INLINE_LOOP = """
for xb in tf.data.Dataset.from_tensor_slices(tf.ones((8, 3))).batch(4):
    counter.assign_add(1.0)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(net(xb, counter, training=True) ** 2)
    grads = tape.gradient(loss, net.trainable_variables)
    opt.apply_gradients(zip(grads, net.trainable_variables))
"""


def test_an_extraction_reaching_a_hazard_without_a_fix_is_refused() -> None:
    source = LOGGED + INLINE_LOOP
    findings = {f.code: f for f in check_source(source)}
    extraction = findings["TFR303"]
    assert extraction.fix is None
    assert "(no fix: under tracing it would change meaning and cannot be rewritten: " in (
        extraction.message
    )
    assert "line 8 in `scaled_noise`: TFR205 `logging.info(...)`" in extraction.message
    assert fix_source(source, unsafe_fixes=True) == source


def test_a_decoration_reaching_a_hazard_without_a_fix_is_refused() -> None:
    source = (
        LOGGED
        + """

def train_step(xb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(net(xb, counter, training=True) ** 2)
    grads = tape.gradient(loss, net.trainable_variables)
    opt.apply_gradients(zip(grads, net.trainable_variables))


for xb in tf.data.Dataset.from_tensor_slices(tf.ones((8, 3))).batch(4):
    counter.assign_add(1.0)
    train_step(xb)
"""
    )
    decoration = next(f for f in check_source(source) if f.code == "TFR302")
    assert decoration.fix is None
    assert "line 8 in `scaled_noise`: TFR205" in decoration.message
    assert fix_source(source, unsafe_fixes=True) == source


def test_an_extraction_whose_reached_hazard_has_a_fix_goes_with_it() -> None:
    source = MODEL + (
        """

net, opt = Net(), keras.optimizers.SGD(0.1)
counter = tf.Variable(0)
"""
        + INLINE_LOOP.replace("1.0)", "1)")
    )
    findings = {f.code: f for f in check_source(source)}
    assert findings["TFR105"].start.line == 6
    assert findings["TFR303"].fix is not None
    fixed = fix_source(source, unsafe_fixes=True)
    assert "frac = tf.cast(step + 1, tf.float32) / float(total)" in fixed
    assert "@tf.function(reduce_retracing=True)\ndef net_train_step(xb):" in fixed


def test_a_reached_function_with_its_own_decorator_does_not_block() -> None:
    source = LOGGED.replace("def scaled_noise", "@tf.function\ndef scaled_noise") + INLINE_LOOP
    extraction = next(f for f in check_source(source) if f.code == "TFR303")
    assert extraction.fix is not None


STATIC_LENGTHS = """
import tensorflow as tf


class RelativeBias(tf.keras.layers.Layer):
    def __init__(self, longest):
        super().__init__()
        self.longest = longest

    def call(self, q, k):
        k_len = k.shape[1]
        q_len = q.shape[1]
        start = self.first_row(q_len)
        return self.align(q @ tf.transpose(k), k_len, q_len)[start:]

    def align(self, scores, k_len, q_len):
        if k_len > q_len:
            return scores[:, :q_len]
        return scores

    def first_row(self, q_len):
        return max(0, self.longest - q_len)
"""


def test_static_dimensions_passed_on_are_python_values() -> None:
    """`k.shape[1]` is an int (or None), never a tensor: a method handed
    the static lengths compares them as Python values, which tracing runs
    once per shape as written (no TFR101, no TFR104)."""
    traced = _traced(STATIC_LENGTHS)
    assert {"k_len", "q_len"} <= traced["RelativeBias.align"].python_params
    assert _codes(STATIC_LENGTHS) == []


CONFIGURED = """
import tensorflow as tf


def mask_spans(shape, span):
    batch, length = shape
    if span > length:
        raise ValueError("span longer than the sequence")
    return tf.ones((batch, length - span + 1))


class Masking(tf.keras.layers.Layer):
    def __init__(self, config):
        super().__init__()
        self.span = config.mask_length

    def call(self, x, training=None):
        return mask_spans(x.shape[:2], self.span)
"""


def test_an_attribute_set_up_from_configuration_is_a_python_value() -> None:
    """`self.span = config.mask_length` holds a Python number: the helper
    it is passed to compares it as one (no TFR101)."""
    traced = _traced(CONFIGURED)
    assert {"shape", "span"} <= traced["mask_spans"].python_params
    assert _codes(CONFIGURED) == []


FACTORIES = """
import tensorflow as tf


def make_transform(use_flip):
    def transform(image):
        if use_flip:
            image = tf.image.flip_left_right(image)
        return image

    return transform


def make_parse(use_flip):
    def parse(record):
        image = tf.io.decode_png(record, channels=3)
        return make_transform(use_flip)(image)

    return parse


def load(files, use_flip=False):
    return tf.data.TFRecordDataset(files).map(make_parse(use_flip))
"""


def test_a_closure_passes_on_what_the_function_around_it_receives() -> None:
    """`parse` hands `make_transform` the `use_flip` of the `make_parse`
    around it, which `load` fills with its Python default: the flag tested
    in the traced `transform` is a Python value (no TFR101)."""
    traced = _traced(FACTORIES)
    assert "use_flip" in traced["make_transform"].python_params
    assert _codes(FACTORIES) == []
