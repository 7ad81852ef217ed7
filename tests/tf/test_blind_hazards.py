"""Shapes found wrong on hand-labelled public code, shown under TensorFlow:
what tfrewrite now says happens when traced does happen, and the form it
leaves eager runs as written."""

from __future__ import annotations

import pytest
import tensorflow as tf

from tfrewrite.api import check_source, fix_source

from .equivalence import load_file_module

pytestmark = pytest.mark.tensorflow


REPLAY = """\
import tensorflow as tf

actor = tf.keras.Sequential([tf.keras.layers.Dense(1)])
target = tf.keras.Sequential([tf.keras.layers.Dense(1)])
actor.build((None, 3))
target.build((None, 3))
opt = tf.keras.optimizers.SGD(0.01)


{decorator}def replay(states, rewards):
    target_q = rewards + 0.9 * target.predict(states, verbose=0)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(actor(states, training=True) - target_q))
    grads = tape.gradient(loss, actor.trainable_variables)
    opt.apply_gradients(zip(grads, actor.trainable_variables))
    return loss


def run():
    losses = []
    for _ in range(3):
        losses.append(float(replay(tf.ones([4, 3]), tf.ones([4, 1]))))
    return losses
"""


def test_a_step_calling_predict_stays_eager_and_fails_when_decorated(tmp_path):
    eager = REPLAY.format(decorator="")
    [step] = [f for f in check_source(eager, select=["TFR302"]) if f.code == "TFR302"]
    assert step.fix is None
    assert "calls `target.predict`: Keras' predict runs its own loop" in step.message
    # Eagerly the step trains as written.
    losses = load_file_module(eager, tmp_path, "replay_eager").run()
    assert len(losses) == 3 and losses[-1] < losses[0]
    # Decorated by hand, `predict` raises inside the trace.
    traced = load_file_module(REPLAY.format(decorator="@tf.function\n"), tmp_path, "replay_traced")
    with pytest.raises(AttributeError, match="'SymbolicTensor' object has no attribute 'numpy'"):
        traced.run()


SHORT_LAST_BATCH = """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.build((None, 3))
optimizer = tf.keras.optimizers.SGD(0.01)
dataset = tf.data.Dataset.from_tensor_slices((tf.ones([11, 3]), tf.ones([11, 1])))


def augment(x):
    return x * tf.random.uniform([x.shape[0], 1], 0.9, 1.1)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(augment(x), training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def run():
    sizes = []
    for x, y in dataset.batch(4):
        train_step(x, y)
        sizes.append(int(x.shape[0]))
    return sizes
"""


def test_a_step_whose_callee_reads_the_batch_size_is_decorated_without_reduce_retracing(
    tmp_path,
):
    fixed = fix_source(SHORT_LAST_BATCH, select=["TFR302"])
    assert "@tf.function\ndef train_step" in fixed
    assert load_file_module(fixed, tmp_path, "short_fixed").run() == [4, 4, 3]
    # With `reduce_retracing=True` the short batch is traced with a `None`
    # batch dimension, and the callee's shape cannot be built from it.
    relaxed = fixed.replace("@tf.function\n", "@tf.function(reduce_retracing=True)\n")
    with pytest.raises((TypeError, ValueError)):
        load_file_module(relaxed, tmp_path, "short_relaxed").run()


NORM = """\
import tensorflow as tf


class Norm:
    def __init__(self):
        self.made = False

    def make(self, n):
        self.beta = tf.compat.v1.get_variable("tfrewrite_norm_beta", [1, n])
        self.made = True

    def __call__(self, x):
        if not self.made:
            self.make(x.shape[-1])
        return x + self.beta
"""


def test_get_variable_of_two_objects_works_eagerly_and_raises_in_one_trace(tmp_path) -> None:
    """TFR204 on `tf.compat.v1.get_variable`: eagerly each object gets its
    own variable; in one trace the second object's variable of the same
    name raises."""
    import tensorflow as tf

    eager = load_file_module(NORM, tmp_path)
    first, second = eager.Norm(), eager.Norm()
    assert second(first(tf.ones([2, 3]))).shape == (2, 3)
    traced = load_file_module(NORM, tmp_path)
    third, fourth = traced.Norm(), traced.Norm()
    with pytest.raises(AttributeError):
        tf.function(lambda x: fourth(third(x)))(tf.ones([2, 3]))


@pytest.mark.parametrize("shape", ["held", "listed"])
def test_dropout_in_a_method_the_step_calls_directly_is_off_until_training_is_passed_on(
    tmp_path, shape
) -> None:
    """The shape `test_blind_findings` reports: `train_step` runs
    `self.forward(x, True)`, outside any call context; the `Dropout` that
    `forward` calls without `training` stays in inference mode, eagerly and
    traced. After the fix it drops units in training and not in evaluation."""
    import textwrap

    import tensorflow as tf
    from tests.test_blind_findings import FORWARD_PASS, LISTED_LAYERS

    source = textwrap.dedent(FORWARD_PASS if shape == "held" else LISTED_LAYERS)
    fixed = fix_source(source, select=["TFR304"], unsafe_fixes=True)
    x = tf.ones((64, 8))
    for text, drops in ((source, False), (fixed, True)):
        module = load_file_module(text, tmp_path)
        net = module.Net()
        for run in (net.forward, tf.function(net.forward)):
            trained, evaluated = run(x, True), run(x, False)
            assert bool(tf.reduce_any(trained != evaluated)) is drops


def test_an_object_built_in_traced_code_computes_in_the_trace(tmp_path) -> None:
    """The shape `test_blind_findings` reports in `Pairs.__init__`'s
    helper: eagerly it runs; traced on an unknown batch the static
    dimension raises; the rewrite runs and matches."""
    import textwrap

    import tensorflow as tf
    from tests.test_blind_findings import PAIRS

    source = textwrap.dedent(PAIRS)
    rewritten = fix_source(source, select=["TFR107"], unsafe_fixes=True)
    assert "tf.shape(a)[0]" in rewritten
    before, after = load_file_module(source, tmp_path), load_file_module(rewritten, tmp_path)
    a, b = tf.ones((3, 2)), tf.ones((3, 2)) * 2.0
    unknown = [tf.TensorSpec([None, 2]), tf.TensorSpec([None, 2])]
    with pytest.raises((ValueError, TypeError)):
        tf.function(before.attend.python_function, input_signature=unknown)(a, b)
    traced = tf.function(after.attend.python_function, input_signature=unknown)
    assert bool(tf.reduce_all(traced(a, b) == before.attend.python_function(a, b)))


ANNEALED = """\
import tensorflow as tf


class Annealed(tf.keras.losses.Loss):
    def __init__(self, warmup=5):
        super().__init__()
        self.warmup = warmup
        self.step = 0

    def call(self, y_true, y_pred):
        weight = tf.minimum(1.0, self.step / self.warmup)
        return tf.reduce_mean(tf.square(y_true - y_pred)) * weight

    def advance(self, count):
        self.step = count


def run(traced):
    loss = Annealed()
    compute = tf.function(loss) if traced else loss
    values = []
    for epoch in range(3):
        loss.advance(epoch)
        values.append(float(compute(tf.ones([2, 1]), tf.zeros([2, 1]))))
    return values
"""


def test_a_number_a_setter_replaces_is_read_once_when_traced(tmp_path):
    """The setter's new value reaches every eager call; the traced loss
    keeps the value of its first trace, as TFR201 says."""
    [finding] = check_source(ANNEALED, select=["TFR201"])
    assert "`self.step`" in finding.message and finding.fix is None
    module = load_file_module(ANNEALED, tmp_path, "annealed")
    assert module.run(traced=False) == pytest.approx([0.0, 0.2, 0.4])
    assert module.run(traced=True) == pytest.approx([0.0, 0.0, 0.0])


# `fit` for three epochs of one batch with a model and a callback, eagerly or
# traced: what the model's step returns, per epoch.
FIT_THREE_EPOCHS = """

def run(eagerly):
    model = {model}()
    model.compile(optimizer="sgd", run_eagerly=eagerly)
    x, y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
    history = model.fit(x, y, epochs=3, batch_size=4, verbose=0, callbacks=[{callback}()])
    return history.history["{key}"]
"""

CURRICULUM = """\
import numpy as np
import tensorflow as tf


class Curriculum(tf.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.model.weighting = float(epoch)


class Weighted(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)
        self.weighting = 0.0

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.dense(x, training=True) - y)) * self.weighting
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"weighting": tf.constant(self.weighting)}
"""
CURRICULUM += FIT_THREE_EPOCHS.format(model="Weighted", callback="Curriculum", key="weighting")


def test_an_attribute_a_callback_sets_is_read_once_by_fit(tmp_path):
    """The callback's new value reaches every eager step; `fit`'s traced
    `train_step` keeps the value of its first trace, as TFR201 says."""
    [finding] = check_source(CURRICULUM, select=["TFR201"])
    assert "`self.weighting`" in finding.message
    module = load_file_module(CURRICULUM, tmp_path, "curriculum")
    assert module.run(eagerly=True) == pytest.approx([0.0, 1.0, 2.0])
    assert module.run(eagerly=False) == pytest.approx([0.0, 0.0, 0.0])


TEACHER_SWAP = """\
import numpy as np
import tensorflow as tf


def constant_teacher(value):
    fill = tf.keras.layers.Lambda(lambda x: tf.fill([tf.shape(x)[0], 1], value))
    return tf.keras.Sequential([fill])


class NextTeacher(tf.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.model.teacher = constant_teacher(10.0 * epoch)


class Student(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)
        self.teacher = constant_teacher(0.0)

    def train_step(self, data):
        x, y = data
        target = self.teacher(x)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.dense(x, training=True) - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"target": tf.reduce_mean(target)}
"""
TEACHER_SWAP += FIT_THREE_EPOCHS.format(model="Student", callback="NextTeacher", key="target")


def test_a_model_a_callback_replaces_is_never_called_by_fit(tmp_path):
    """Each epoch's new teacher is called by the eager steps; `fit`'s traced
    `train_step` keeps calling the teacher of its first trace, as TFR201
    says (a call of the attribute, reported without a fix)."""
    [finding] = check_source(TEACHER_SWAP, select=["TFR201"])
    assert "`self.teacher`" in finding.message and "called in traced" in finding.message
    assert finding.fix is None
    module = load_file_module(TEACHER_SWAP, tmp_path, "teacher_swap")
    assert module.run(eagerly=True) == pytest.approx([0.0, 10.0, 20.0])
    assert module.run(eagerly=False) == pytest.approx([0.0, 0.0, 0.0])


KERAS_GET_VALUE = """\
import tensorflow as tf

weight = tf.Variable(20.0)


@tf.function
def weighted(x):
    return tf.keras.backend.get_value(weight) * x


def run(function):
    values = []
    for scale in (20.0, 10.0, 5.0):
        weight.assign(scale)
        values.append(float(function(tf.constant(2.0))))
    return values
"""


def test_keras_get_value_reads_a_variable_once_when_traced(tmp_path):
    """Eagerly `get_value` follows every assignment; traced it keeps the
    value of the first trace; the rewrite traced without AutoGraph follows
    them again, as TFR105 says."""
    [finding] = check_source(KERAS_GET_VALUE, select=["TFR105"])
    assert "read once, at trace time" in finding.message
    module = load_file_module(KERAS_GET_VALUE, tmp_path, "get_value_original")
    eager = module.run(module.weighted.python_function)
    assert eager == pytest.approx([40.0, 20.0, 10.0])
    assert module.run(module.weighted) == pytest.approx([40.0, 40.0, 40.0])
    fixed_source = fix_source(KERAS_GET_VALUE, select=["TFR105"], unsafe_fixes=True)
    assert "get_value" not in fixed_source
    fixed = load_file_module(fixed_source, tmp_path, "get_value_fixed")
    traced = tf.function(fixed.weighted.python_function, autograph=False)
    assert fixed.run(traced) == pytest.approx(eager)


KEPT_TENSOR = """\
import tensorflow as tf


class Estimator:
    @tf.function
    def first_stage(self, a, b):
        self.coef = coef = tf.linalg.solve(a, b)
        return coef
"""


def test_a_tensor_a_traced_method_keeps_on_self_is_symbolic_and_stale(tmp_path):
    """Eagerly `coef` holds each call's solution; traced it holds the first
    trace's symbolic tensor, with no value and not updated by later calls,
    as TFR202 says (reported without a fix)."""
    [finding] = check_source(KEPT_TENSOR, select=["TFR202"])
    assert "`self.coef`" in finding.message and finding.fix is None
    module = load_file_module(KEPT_TENSOR, tmp_path, "kept_tensor")
    a = tf.eye(2)
    eager = module.Estimator()
    module.Estimator.first_stage.python_function(eager, a, tf.ones([2, 1]))
    module.Estimator.first_stage.python_function(eager, a, 3.0 * tf.ones([2, 1]))
    assert eager.coef.numpy().ravel().tolist() == [3.0, 3.0]
    traced = module.Estimator()
    traced.first_stage(a, tf.ones([2, 1]))
    kept = traced.coef
    traced.first_stage(a, 3.0 * tf.ones([2, 1]))
    assert traced.coef is kept and not hasattr(kept, "numpy")


KEPT_BY_CALL = """\
import tensorflow as tf


class Encoder(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(2)

    def call(self, x):
        hidden = tf.nn.relu(self.dense(x))
        self.hidden = hidden
        return hidden
"""


def test_a_tensor_a_keras_call_keeps_on_self_is_symbolic_after_fit(tmp_path):
    """Called eagerly, `hidden` holds the last batch's activations; after
    `fit` (which traces `call`) it holds a symbolic tensor of the trace, with
    no value: TFR202 reports it, without a fix."""
    [finding] = check_source(KEPT_BY_CALL, select=["TFR202"])
    assert "`self.hidden`" in finding.message and finding.fix is None
    module = load_file_module(KEPT_BY_CALL, tmp_path, "kept_by_call")
    x, y = tf.ones([4, 3]), tf.zeros([4, 2])
    eager = module.Encoder()
    eager(x)
    assert eager.hidden.numpy().shape == (4, 2)
    fitted = module.Encoder()
    fitted.compile(optimizer="sgd", loss="mse")
    fitted.fit(x, y, epochs=1, verbose=0)
    assert not hasattr(fitted.hidden, "numpy")


def test_an_argument_a_traced_method_keeps_on_self_is_set_only_while_tracing(tmp_path):
    """`self.rate = rate` in a traced `call`: eagerly the object keeps what
    the last call passed (0.9); traced, calls with 0.9, 0.1, 0.9 trace twice
    and the third reuses the first trace, so it keeps 0.1 (TFR202)."""
    from tests.test_kept_tensors import RATE_ARGUMENT

    [finding] = check_source(RATE_ARGUMENT, select=["TFR202"])
    assert "`self.rate`" in finding.message and finding.fix is None
    module = load_file_module(RATE_ARGUMENT, tmp_path, "rate_argument")
    x = tf.ones([2, 4])
    eager, traced = module.Automaton(), module.Automaton()
    for rate in (0.9, 0.1, 0.9):
        module.Automaton.call.python_function(eager, x, rate=rate)
        traced(x, rate=rate)
    assert eager.rate == 0.9
    assert traced.rate == 0.1


def test_a_flag_guarding_a_variable_write_runs_the_write_on_every_traced_call(tmp_path):
    """`if self.first: self.first = False; self.mean.assign(m)`: eagerly the
    reference mean is the first batch's; traced, the kept branch assigns it
    on every call, so it follows the last batch (TFR202, no fix)."""
    from tests.test_flag_guarded_effects import REFERENCE_NORM

    [finding] = check_source(REFERENCE_NORM, select=["TFR202"])
    assert "`self.first`" in finding.message and finding.fix is None
    module = load_file_module(REFERENCE_NORM, tmp_path, "reference_norm")
    batches = [tf.fill([2, 3], float(v)) for v in (1.0, 5.0, 9.0)]
    eager, traced = module.ReferenceNorm(), module.ReferenceNorm()
    traced_call = tf.function(traced.call)
    for batch in batches:
        eager(batch, training=True)
        if not traced.built:
            traced.build(batch.shape)
        traced_call(batch, training=True)
    assert eager.mean.numpy().tolist() == [1.0, 1.0, 1.0]
    assert traced.mean.numpy().tolist() == [9.0, 9.0, 9.0]


def test_changing_a_container_argument_raises_only_when_traced(tmp_path):
    """Eagerly `logs` gets its entry; traced, `tf.function` raises
    `ValueError` (TFR202, no fix)."""
    from tests.test_argument_mutations import SOURCE

    findings = check_source(SOURCE, select=["TFR202"])
    assert len(findings) == 2 and all(f.fix is None for f in findings)
    module = load_file_module(SOURCE, tmp_path, "argument_mutations")
    logs: dict = {}
    module.log_temperature.python_function(tf.constant(1.5), logs)
    assert float(logs["temp"]) == 3.0
    with pytest.raises(ValueError, match="should not modify its Python input arguments"):
        module.log_temperature(tf.constant(1.5), {})
    history: list = []
    with pytest.raises(ValueError, match="should not modify its Python input arguments"):
        module.record(tf.constant(1.0), history)
    assert float(module.copied(tf.constant(1.0), [])) == 1.0


CONVERTED_SHAPE = """\
import tensorflow as tf


def fold(x):
    rows, cols = map(int, x.shape.as_list())
    return tf.reshape(x, [rows, cols // 2, 2])
"""


def test_dimensions_converted_one_by_one_raise_when_the_batch_is_unknown(tmp_path):
    """Eagerly every dimension is known; traced with an unknown batch
    (`input_signature`), `int(None)` raises (TFR107, no fix)."""
    source = CONVERTED_SHAPE + "\n\n@tf.function\ndef folded(x):\n    return fold(x)\n"
    [finding] = check_source(source, select=["TFR107"])
    assert finding.fix is None
    module = load_file_module(CONVERTED_SHAPE, tmp_path, "converted_shape")
    assert module.fold(tf.ones([3, 4])).shape == (3, 2, 2)
    unknown = tf.function(module.fold, input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    with pytest.raises(TypeError):
        unknown(tf.ones([3, 4]))


def test_a_wrapper_of_a_weightless_cell_built_in_traced_code_creates_no_variable(tmp_path):
    """`RNN(DecodeCell(...))` built on every call of a `tf.function`: the
    cell holds no variable, so retracing (a new sequence length) works, and
    TFR204 does not report it; a `GRUCell` inside would raise."""
    from tests.test_wrapped_cells import SOURCE

    source = SOURCE.replace("{cell}", "DecodeCell(transitions)")
    module = load_file_module(source, tmp_path, "wrapped_cells")
    transitions = tf.zeros([3, 3])
    for steps in (4, 5):
        inputs = tf.ones([2, steps, 3])
        module.decode(inputs, transitions, [tf.zeros([2, 3])])
    weighted = load_file_module(
        SOURCE.replace("{cell}", "tf.keras.layers.GRUCell(3)"), tmp_path, "wrapped_gru"
    )
    with pytest.raises(ValueError, match="singleton"):
        for steps in (4, 5):
            weighted.decode(tf.ones([2, steps, 3]), transitions, [tf.zeros([2, 3])])


WEIGHT_COPIES = """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)


def step(x, y):
    saved = model.get_weights()
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    model.set_weights(saved)
    return loss


def fit(batches):
    for x, y in batches:
        step(x, y)
"""


def test_a_step_that_copies_weights_on_the_host_is_not_decorated(tmp_path):
    """`get_weights` runs eagerly and raises traced: TFR302 names it as the
    reason the step stays eager, with no fix."""
    [finding] = check_source(WEIGHT_COPIES, select=["TFR302"])
    assert finding.fix is None and "get_weights" in finding.message
    module = load_file_module(WEIGHT_COPIES, tmp_path, "weight_copies")
    x, y = tf.ones([4, 2]), tf.zeros([4, 1])
    assert float(module.step(x, y)) >= 0.0
    with pytest.raises(NotImplementedError):
        tf.function(module.step)(x, y)
