"""TFR202: a method its own `@tf.function` traces that keeps a tensor it
computes on `self` (`self.coef = tf.linalg.solve(a, b)`), for code outside
the object to read: after the call the attribute holds the trace's symbolic
tensor, never updated by later calls. The same holds for the `call` of a
Keras layer or model, which `fit` and every traced caller trace, also for a
list of tensors (`self.outputs = [h, state_h, state_c]` of an LSTM built with
`return_state=True`). Reported without a fix. Not reported where the module
reads the attribute back (scratch state of the trace), nor for a variable or
a Python value."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

ESTIMATOR = """
import tensorflow as tf


class Estimator:
    def __init__(self):
        self.scale = tf.Variable(1.0)

    @tf.function
    def first_stage(self, a, b):
        self.coef = coef = tf.linalg.solve(a, b)
        self.count = 1
        self.kept = self.scale
        return coef
"""


def test_a_tensor_kept_on_self_by_a_traced_method_is_reported() -> None:
    findings = check_source(textwrap.dedent(ESTIMATOR), select=["TFR202"])
    assert [(f.start.line, f.fix) for f in findings] == [(11, None)]
    assert "`self.coef` keeps a tensor of the trace" in findings[0].message


def test_an_attribute_the_module_reads_back_is_scratch_state() -> None:
    source = textwrap.dedent(ESTIMATOR) + textwrap.dedent(
        """
        def report(estimator):
            return estimator.coef
        """
    )
    assert check_source(source, select=["TFR202"]) == []


def test_a_layer_call_keeping_a_tensor_for_other_code_is_reported() -> None:
    source = """
    import tensorflow as tf


    class Encoder(tf.keras.Model):
        def __init__(self, units):
            super().__init__()
            self.lstm = tf.keras.layers.LSTM(units, return_state=True, return_sequences=True)

        def call(self, tokens):
            self.seen = tokens
            sequence, state_h, state_c = self.lstm(tokens)
            self.states = [state_h, state_c]
            self.width = 4
            return sequence
    """
    findings = check_source(textwrap.dedent(source), select=["TFR202"])
    assert [(f.start.line, f.fix) for f in findings] == [(11, None), (13, None)]
    assert "`self.seen` keeps a tensor of the trace of `Encoder.call`" in findings[0].message
    assert "`self.states` keeps tensors of the trace of `Encoder.call`" in findings[1].message


def test_a_layer_call_keeping_state_it_reads_back_is_not_reported() -> None:
    source = """
    import tensorflow as tf


    class Attention(tf.keras.layers.Layer):
        def call(self, x):
            self.weights_seen = tf.nn.softmax(x)
            return x * self.weights_seen
    """
    assert check_source(textwrap.dedent(source), select=["TFR202"]) == []


RATE_ARGUMENT = """
import tensorflow as tf


class Automaton(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.update = tf.keras.layers.Dense(4)

    @tf.function
    def call(self, x, rate=0.5):
        self.rate = rate  # for other code to read: the rate of the last call
        mask = tf.cast(tf.random.uniform(tf.shape(x)) < rate, x.dtype)
        return x + mask * self.update(x)
"""


def test_an_argument_kept_on_self_in_traced_code_is_set_only_while_tracing() -> None:
    findings = check_source(textwrap.dedent(RATE_ARGUMENT), select=["TFR202"])
    assert [(f.start.line, f.fix) for f in findings] == [(12, None)]
    assert "assigning `self.rate` from the argument `rate`" in findings[0].message
    assert "runs only while tracing" in findings[0].message


def test_a_property_setter_storing_its_argument_is_not_reported() -> None:
    # The getter `teacher` runs in the traced step; the setter of the same
    # name is called eagerly (by a callback), and storing is what it is for.
    source = """
    import tensorflow as tf


    class Distiller(tf.keras.Model):
        def __init__(self, teacher):
            super().__init__()
            self._teacher = teacher

        @property
        def teacher(self):
            return self._teacher

        @teacher.setter
        def teacher(self, model):
            self._teacher = model

        def train_step(self, data):
            x, y = data
            return {"gap": tf.reduce_mean(self.teacher(x) - y)}
    """
    assert check_source(textwrap.dedent(source), select=["TFR202"]) == []


def test_an_argument_of_unknown_kind_kept_on_self_is_not_reported() -> None:
    # `mask=None` may be a tensor (Keras passes one): no evidence of a Python value.
    source = """
    import tensorflow as tf


    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(2)

        def call(self, inputs, mask=None):
            self.last_mask = mask
            return self.dense(inputs)
    """
    assert check_source(textwrap.dedent(source), select=["TFR202"]) == []


def test_an_argument_the_module_reads_back_is_the_calls_own_state() -> None:
    source = RATE_ARGUMENT.replace("< rate, x.dtype)", "< self.rate, x.dtype)")
    assert check_source(textwrap.dedent(source), select=["TFR202"]) == []


# A policy whose decorated `act` keeps its Q-values for an eager method.
POLICY = """
import tensorflow as tf


class Policy:
    def __init__(self):
        self.net = tf.keras.Sequential([tf.keras.layers.Dense(2)])

    @tf.function
    def act(self, obs):
        self.q_values = KEPT
        self.width = obs.shape[-1]
        return tf.argmax(self.q_values, axis=1)

    def probabilities(self):
        return tf.nn.softmax(self.q_values), self.width
"""


def _policy_findings(source: str) -> list[tuple[int, str]]:
    found = check_source(textwrap.dedent(source).lstrip(), select=["TFR202"])
    return [(f.start.line, f.message) for f in found]


def test_a_tensor_an_eager_method_reads_is_reported_where_it_is_kept() -> None:
    """Read back by `probabilities`, which runs eagerly: the read raises
    ("out of scope"). Also what a held model computes (`self.net(obs)`)."""
    for kept in ("self.net(obs)", "tf.nn.relu(obs)"):
        ((line, message),) = _policy_findings(POLICY.replace("KEPT", kept))
        assert line == 10
        assert "`self.q_values` keeps a tensor of the trace of `Policy.act`" in message
        assert "`Policy.probabilities` runs eagerly and reads it" in message


def test_a_tensor_only_the_trace_reads_back_is_left_alone() -> None:
    source = POLICY.replace("KEPT", "self.net(obs)").replace(
        "return tf.nn.softmax(self.q_values), self.width", "return self.width"
    )
    assert _policy_findings(source) == []
