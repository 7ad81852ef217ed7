"""Minimal reproductions of hazards (and non-hazards) seen in public TF2
projects: each test is one pattern the shared analysis must get right."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.api import check_source
from tfrewrite.pipeline.engine import InputFile, RunOptions, run


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def _run(
    tmp_path: Path, files: dict[str, str], codes: tuple[str, ...]
) -> list[tuple[str, int, str]]:
    for name, text in files.items():
        (tmp_path / name).write_text(_d(text))
    inputs = [InputFile(str(p)) for p in sorted(tmp_path.glob("*.py"))]
    result = run(inputs, RunOptions(rule_codes=codes, root=str(tmp_path)), jobs=1)
    return sorted((Path(f.path).name, f.start.line, f.code) for f in result.findings)


AGENT = """
    import tensorflow as tf
    from buffer import ReplayBuffer


    class Agent:
        def __init__(self):
            self.memory = ReplayBuffer()
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            self.opt = tf.keras.optimizers.Adam()

        def learn(self):
            if self.memory.mem_cntr < 64:
                return
            x = tf.ones((2, 1))
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.model(x, training=True) ** 2)
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
"""
# Neither file names TensorFlow: both are put aside by the byte prefilter.
BUFFER = """
    class ReplayBuffer:
        def __init__(self):
            self.mem_cntr = 0

        def store(self, item):
            self.mem_cntr += 1
"""
MAIN = """
    from agent import Agent

    agent = Agent()
    for episode in range(10):
        agent.memory.store(episode)
        agent.learn()
"""


def test_a_script_without_tensorflow_that_drives_the_step_is_indexed(tmp_path: Path) -> None:
    """`agent.learn()` in a `main.py` that imports no TensorFlow: the loop is
    found, so the step is a train step (TFR302) checked as traced code."""
    found = _run(tmp_path, {"agent.py": AGENT, "buffer.py": BUFFER, "main.py": MAIN}, ("TFR302",))
    assert found == [("agent.py", 11, "TFR302")]


def test_without_the_driver_there_is_no_train_step(tmp_path: Path) -> None:
    assert _run(tmp_path, {"agent.py": AGENT, "buffer.py": BUFFER}, ("TFR302",)) == []


def test_counter_of_a_held_object_in_a_module_without_tensorflow(tmp_path: Path) -> None:
    """`self.memory.mem_cntr` read in the step, where the buffer (its own
    file, no TensorFlow) counts with `self.mem_cntr += 1`: frozen once traced,
    so TFR302 names it as a blocker instead of decorating (and, the step
    staying eager, it is no finding of its own)."""
    files = {"agent.py": AGENT, "buffer.py": BUFFER, "main.py": MAIN}
    found = _run(tmp_path, files, ("TFR201", "TFR302"))
    assert found == [("agent.py", 11, "TFR302")]
    result = run(
        [InputFile(str(tmp_path / n)) for n in files],
        RunOptions(rule_codes=("TFR302",), root=str(tmp_path)),
        jobs=1,
    )
    (step,) = result.findings
    assert "self.memory.mem_cntr" in step.message and step.fix is None


def test_held_object_that_does_not_count_is_not_state() -> None:
    source = (
        _d(AGENT).replace("from buffer import ReplayBuffer\n", "")
        + "\n\n"
        + _d(BUFFER).replace("self.mem_cntr += 1", "print(item)")
    )
    source += "\n\nagent = Agent()\nfor i in range(3):\n    agent.learn()\n"
    assert [f.code for f in check_source(source, select=["TFR201"])] == []


LOOP_GLOBAL = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD()
    lr_scale = 1.0


    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x, training=True) - y) ** 2) * lr_scale
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    for epoch in range(3):
        lr_scale = 1.0 / (epoch + 1)
        train_step(tf.ones((2, 1)), tf.ones((2, 1)))
"""


def test_module_global_rebound_in_a_module_level_loop_blocks_the_step() -> None:
    """Decorating the step would freeze `lr_scale` at 1.0: TFR302 lists it as
    a blocker and offers no fix (it was a safe fix); the step staying eager,
    the read is no finding of its own."""
    findings = check_source(_d(LOOP_GLOBAL), select=["TFR201", "TFR302"])
    by_code = {f.code: f for f in findings}
    assert "TFR201" not in by_code
    assert "module-level loop" in by_code["TFR302"].message
    assert by_code["TFR302"].fix is None
    assert "line 10 TFR201 `lr_scale`" in by_code["TFR302"].message


def test_loop_variable_of_a_module_loop_read_in_traced_code() -> None:
    source = """
        import tensorflow as tf

        @tf.function
        def step(x):
            return x * epoch

        for epoch in range(3):
            step(tf.ones(2))
    """
    assert [f.code for f in check_source(_d(source), select=["TFR201"])] == ["TFR201"]


def test_module_names_bound_in_if_else_are_bound_once() -> None:
    source = """
        import sys
        import tensorflow as tf

        if sys.platform == "linux":
            SCALE = 1.0
        else:
            SCALE = 2.0

        @tf.function
        def step(x):
            return x * SCALE
    """
    assert check_source(_d(source), select=["TFR201"]) == []


def test_rebound_before_a_second_definition_is_not_frozen() -> None:
    """A guide that defines `train_step` twice and sets `batch_size` again
    between them: the second step is traced only after the last binding."""
    source = """
        import tensorflow as tf

        batch_size = 32

        @tf.function
        def train_step(x):
            return x * batch_size

        for x in range(2):
            train_step(tf.ones(2))

        batch_size = 64

        @tf.function
        def train_step(x):
            return tf.random.normal((batch_size, 2)) + x

        for x in range(2):
            train_step(tf.ones(2))
    """
    # The first step is called only by its own loop, before the rebinding:
    # every call of it sees 32, traced or not.
    assert check_source(_d(source), select=["TFR201"]) == []


def test_rebound_after_the_first_call_is_frozen() -> None:
    source = """
        import tensorflow as tf

        scale = 1.0

        @tf.function
        def step(x):
            return x * scale

        step(tf.ones(2))
        scale = 2.0
        step(tf.ones(2))
    """
    assert [f.code for f in check_source(_d(source), select=["TFR201"])] == ["TFR201"]


NOISY = """
    import tensorflow as tf

    class NoisyDense(tf.keras.layers.Layer):
        def __init__(self, units):
            super().__init__()
            self.units = units
            self.reset_noise()

        def reset_noise(self):
            self.eps = tf.random.normal((self.units,))

        def call(self, inputs):
            return inputs * self.eps
"""


def test_attribute_set_by_a_method_only_init_calls_is_set_up_once() -> None:
    assert check_source(_d(NOISY), select=["TFR201"]) == []


def test_attribute_reset_from_outside_is_state() -> None:
    source = _d(NOISY) + "\n\ndef act(layer):\n    layer.reset_noise()\n"
    assert [f.code for f in check_source(source, select=["TFR201"])] == ["TFR201"]


def test_attribute_set_by_a_method_only_build_calls_is_set_up_once() -> None:
    """Keras runs `build` once, before the first `call`: what the methods
    only it calls assign is set up, as in `__init__`."""
    built = _d(NOISY).replace(
        "        self.reset_noise()\n",
        "\n    def build(self, input_shape):\n        self.reset_noise()\n",
    )
    assert "def build" in built
    assert check_source(built, select=["TFR201"]) == []
    called = built + "\n\ndef act(layer):\n    layer.reset_noise()\n"
    assert [f.code for f in check_source(called, select=["TFR201"])] == ["TFR201"]


ACTION = """
    import tensorflow as tf

    class Agent:
        def __init__(self, sigma=0.1):
            self.sigma = sigma

        def get_action(self, state, test=False):
            return self._get_action_body(tf.constant(state), self.sigma * (1.0 - test))

        @tf.function
        def _get_action_body(self, state, sigma):
            if sigma > 0.0:
                state += tf.random.normal(shape=tf.shape(state), stddev=sigma)
            return state
"""


def test_python_arithmetic_argument_is_a_python_value() -> None:
    """`self.sigma * (1. - test)`: a number set in `__init__` from a numeric
    default, times a bool parameter: a Python float, not a tensor."""
    assert check_source(_d(ACTION), select=["TFR101"]) == []


def test_tensor_arithmetic_argument_is_a_tensor() -> None:
    source = _d(ACTION).replace("self.sigma * (1.0 - test)", "tf.constant(0.1) * 2")
    (finding,) = check_source(source, select=["TFR101"])
    assert finding.fix is not None and finding.fix.applicability.value == "safe"


def test_attribute_rebound_outside_init_is_no_python_number() -> None:
    source = _d(ACTION) + "\n        def anneal(self, value):\n            self.sigma = value\n"
    (finding,) = check_source(source, select=["TFR101"])
    assert "assumes `sigma` is a tensor" in finding.message


def test_a_function_whose_tape_sits_in_its_own_loop_is_a_loop_not_a_step() -> None:
    """`train()` runs ten updates, each with its own tape: TFR303 extracts the
    step; decorating all of `train` (TFR302) would unroll the loop."""
    source = """
        import tensorflow as tf

        def train(q, memory, optimizer):
            for i in range(10):
                s, a = memory.sample(32)
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(q(s, training=True) - a)
                grads = tape.gradient(loss, q.trainable_variables)
                optimizer.apply_gradients(zip(grads, q.trainable_variables))

        def main(q, memory, optimizer):
            for episode in range(100):
                train(q, memory, optimizer)
    """
    codes = [f.code for f in check_source(_d(source), select=["TFR302", "TFR303"])]
    assert codes == ["TFR303"]


REINFORCE = """
    import numpy as np
    import tensorflow as tf

    class Agent:
        def __init__(self, policy, optimizer):
            self.policy = policy
            self.optimizer = optimizer
            self.states = []
            self.rewards = []

        def store(self, state, reward):
            self.states.append(state)
            self.rewards.append(reward)

        def learn(self):
            returns = np.cumsum(np.array(self.rewards)[::-1])[::-1]
            with tf.GradientTape() as tape:
                loss = 0.0
                for g, state in zip(returns, self.states):
                    loss += -g * tf.reduce_sum(self.policy(state[None], training=True))
            grads = tape.gradient(loss, self.policy.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.policy.trainable_variables))
            self.states, self.rewards = [], []

    def main(agent, env):
        for episode in range(100):
            agent.learn()
"""


def test_an_update_over_lists_grown_per_episode_is_eager_by_design() -> None:
    """Each call sees an episode of a new length: traced, it would trace again
    on every call. Not a train step to decorate, and not checked as one."""
    assert check_source(_d(REINFORCE)) == []


def test_an_update_over_a_fixed_buffer_is_still_a_step() -> None:
    source = (
        _d(REINFORCE)
        .replace("self.states.append(state)\n", "self.states = state\n")
        .replace("self.rewards.append(reward)", "self.rewards = reward")
    )
    assert "TFR302" in [f.code for f in check_source(source, select=["TFR302"])]


LAMBDAS = """
    import tensorflow as tf
    from tensorflow import keras

    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(
        optimizer="adam",
        loss=lambda y_true, y_pred: tf.reduce_mean(y_pred) if tf.reduce_sum(y_true) > 0 else 0.0,
    )
    ds = tf.data.Dataset.range(10).map(lambda x: x * 2 if x > 3 else x)
    layer = keras.layers.Lambda(lambda t: t if tf.reduce_sum(t) > 0 else -t)
    out = tf.map_fn(lambda e: e if e > 0 else -e, tf.constant([1.0, -2.0]))
"""


def test_lambdas_handed_to_tracers_are_traced_code() -> None:
    """A lambda loss given to `compile`, a `Dataset.map` function, a Keras
    `Lambda` layer and a `tf.map_fn` function: each conditional on what the
    tracer passes is reported, without a fix."""
    findings = check_source(_d(LAMBDAS), select=["TFR101"])
    assert [f.start.line for f in findings] == [7, 9, 10, 11]
    assert all(f.fix is None and "lambda runs traced" in f.message for f in findings)


def test_lambdas_with_python_conditions_are_clean() -> None:
    source = """
        import tensorflow as tf

        training = True
        ds = tf.data.Dataset.range(10).map(lambda x: x * 2 if training else x)
        ds = ds.map(lambda x: x if x.shape.rank == 0 else tf.reshape(x, [-1]))
        keep = sorted([3, 1], key=lambda v: v if v > 0 else -v)
    """
    assert check_source(_d(source), select=["TFR101"]) == []


def test_lambda_in_a_traced_function_is_reported_once() -> None:
    source = """
        import tensorflow as tf

        @tf.function
        def f(xs):
            return tf.map_fn(lambda e: e if e > 0 else -e, xs)
    """
    assert len(check_source(_d(source), select=["TFR101"])) == 1


def test_strategy_run_lambda_is_likely_traced() -> None:
    source = """
        import tensorflow as tf

        strategy = tf.distribute.get_strategy()
        out = strategy.run(lambda x: x if x > 0 else -x, args=(tf.constant(1.0),))
    """
    (finding,) = check_source(_d(source), select=["TFR101"])
    assert "when `x` is a tensor" in finding.message


SPELLINGS = """
    import functools
    from functools import partial

    import tensorflow as tf

    f = tf.function


    @f
    def aliased(x):
        if tf.reduce_sum(x) > 0:
            return x
        return -x


    @partial(tf.function, jit_compile=True)
    def partial_fn(x):
        if tf.reduce_sum(x) > 0:
            return x
        return -x


    @functools.partial(tf.function, reduce_retracing=True)
    def partial_fn2(x):
        if tf.reduce_sum(x) > 0:
            return x
        return -x
"""


def test_tf_function_spelled_through_an_alias_or_partial_is_traced() -> None:
    findings = check_source(_d(SPELLINGS), select=["TFR101"])
    assert [f.start.line for f in findings] == [11, 18, 25]


def test_a_model_that_is_a_lambda_takes_no_training_argument() -> None:
    """`model = lambda x: ...`: named like a model, but `training=True`
    would raise a `TypeError`; TFR304 says nothing."""
    source = """
        import tensorflow as tf

        W = tf.Variable(tf.zeros([4, 2]))
        model = lambda x: tf.nn.softmax(tf.matmul(x, W))
        optimizer = tf.optimizers.Adam(0.1)

        for x, y in batches:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x) - y) ** 2)
            grads = tape.gradient(loss, [W])
            optimizer.apply_gradients(zip(grads, [W]))
    """
    assert check_source(_d(source), select=["TFR304"]) == []
    with_model = _d(source).replace(
        "model = lambda x: tf.nn.softmax(tf.matmul(x, W))",
        "model = tf.keras.Sequential([tf.keras.layers.Dropout(0.5)])",
    )
    assert [f.code for f in check_source(with_model, select=["TFR304"])] == ["TFR304"]


MANUAL_SGD = """
    import tensorflow as tf

    W = tf.Variable(1.0)
    b = tf.Variable(0.0)

    for epoch in range(30):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(W * xs + b - ys))
        dW, db = tape.gradient(loss, [W, b])
        W.assign_sub(0.1 * dW)
        b.assign_sub(0.1 * db)
"""


def test_a_hand_written_descent_step_is_a_training_loop() -> None:
    assert [f.code for f in check_source(_d(MANUAL_SGD), select=["TFR303"])] == ["TFR303"]


def test_a_constant_assign_sub_is_no_update() -> None:
    source = _d(MANUAL_SGD).replace("W.assign_sub(0.1 * dW)", "W.assign_sub(1)")
    source = source.replace("b.assign_sub(0.1 * db)", "print(dW, db)")
    assert check_source(source, select=["TFR303"]) == []


def test_keras3_optimizer_apply_is_an_update() -> None:
    source = """
        import keras
        import tensorflow as tf

        model = keras.Sequential([keras.layers.Dense(1)])
        optimizer = keras.optimizers.Adam()
        for x, y in batches:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x, training=True) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_weights)
            optimizer.apply(grads, model.trainable_weights)
    """
    assert [f.code for f in check_source(_d(source), select=["TFR303"])] == ["TFR303"]
    assert (
        check_source(_d(source).replace("optimizer.apply(", "layer.apply("), select=["TFR303"])
        == []
    )


def test_a_plain_object_called_like_a_model_takes_no_training_argument() -> None:
    source = """
        import tensorflow as tf

        class Model(object):
            def __init__(self):
                self.W = tf.Variable(10.0)

            def __call__(self, inputs):
                return self.W * inputs

        model = Model()
        for epoch in range(30):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(xs) - ys))
            dW = tape.gradient(loss, model.W)
            model.W.assign_sub(0.1 * dW)
    """
    assert check_source(_d(source), select=["TFR304"]) == []


def test_state_rebound_through_an_attribute_is_frozen_state():
    """A class attribute, an imported module's attribute and a closure
    variable bound by a builtin's result, each rebound per epoch and read in
    traced code: all three are frozen at the first trace."""
    source = _d(
        """
        import tensorflow as tf
        import config


        class Schedule:
            margin = 1.0


        @tf.function
        def loss(y_true, y_pred):
            return tf.reduce_mean(y_pred - y_true) * Schedule.margin * config.SCALE


        def train(batches):
            k = 1.0

            @tf.function
            def scaled(x):
                return x * k

            for epoch in range(10):
                Schedule.margin = epoch / 10
                config.SCALE = epoch
                k = float(epoch)
                for x, y in batches:
                    loss(y, scaled(x))
        """
    )
    found = check_source(source, select=["TFR201"])
    assert [(f.start.line, f.message.split(" is ")[0]) for f in found] == [
        (11, "`Schedule.margin`"),
        (11, "`config.SCALE`"),
        (19, "`k`"),
    ]
    assert "(rebound in `train`)" in found[0].message


def test_attributes_set_once_or_on_local_objects_are_not_frozen_state():
    source = _d(
        """
        import tensorflow as tf
        import config


        class Schedule:
            margin = 1.0


        Schedule.margin = 2.0  # configured once, before anything runs
        config.SCALE = 3.0


        @tf.function
        def loss(y_true, y_pred):
            return tf.reduce_mean(y_pred - y_true) * Schedule.margin * config.SCALE


        def train(batches, options):
            for epoch in range(10):
                options.margin = epoch  # an argument's attribute
                for x, y in batches:
                    loss(y, x)
        """
    )
    assert check_source(source, select=["TFR201"]) == []


SECTIONS = """
    import tensorflow as tf

    discount = 0.95

    @tf.function
    def step(x):
        return x * discount

    for x in batches:
        step(x)

    discount = 0.99

    @tf.function
    def step(x):
        return x * discount + 1.0

    for x in batches:
        step(x)
"""


def test_a_section_rebinding_a_parameter_after_its_own_loop_freezes_nothing():
    """Scripts and notebooks in sections: each section sets its parameters,
    defines its step and runs it; a later section's new value is read by the
    later step, never by the earlier one."""
    assert check_source(_d(SECTIONS), select=["TFR201"]) == []


def test_a_rebinding_between_calls_of_one_definition_is_frozen_state():
    source = _d(SECTIONS).replace(
        "discount = 0.99\n\n@tf.function\ndef step(x):\n    return x * discount + 1.0\n",
        "discount = 0.99\n",
    )
    assert "return x * discount + 1.0" not in source
    [finding] = check_source(source, select=["TFR201"])
    assert finding.start.line == 7 and "`discount`" in finding.message


def test_a_top_level_lambda_does_not_stop_the_sections_analysis():
    source = _d(SECTIONS).replace("discount = 0.95", "discount = 0.95\nscale = lambda v: v * 2")
    assert check_source(source, select=["TFR201"]) == []


def test_a_section_step_called_from_a_function_is_not_assumed_settled():
    """`rerun()` may call the first step after the rebinding (the second
    step is defined after every binding: it always sees 0.99)."""
    source = _d(SECTIONS).replace("\n\ndiscount = 0.99", "\n\nrerun()\ndiscount = 0.99")
    source = source.replace(
        "\n\nfor x in batches:", "\n\ndef rerun():\n    step(x)\n\n\nfor x in batches:", 1
    )
    assert [f.start.line for f in check_source(source, select=["TFR201"])] == [7]


def test_a_function_given_to_dataset_map_reads_the_value_of_each_map_call():
    """`Dataset.map` traces its function on every `.map` call and never runs
    it eagerly: a notebook that sets `IMAGE_RES = 299` and maps again gets a
    new trace with the new value, as it would without tracing."""
    source = """
        import tensorflow as tf

        IMAGE_RES = 224

        def format_image(image, label):
            return tf.image.resize(image, (IMAGE_RES, IMAGE_RES)) / 255.0, label

        train = tf.data.Dataset.from_tensor_slices((images, labels)).map(format_image)
        IMAGE_RES = 299
        train = tf.data.Dataset.from_tensor_slices((images, labels)).map(format_image)
    """
    assert check_source(_d(source), select=["TFR201"]) == []


def test_a_module_attribute_another_module_rebinds_is_frozen_where_it_is_read(tmp_path):
    """`cfg.SCALE` read in a traced loss; the training script sets
    `config.SCALE = epoch / 10` every epoch: frozen at the first trace.
    Reported in the module that reads it, saying who rebinds it."""
    files = {
        "config.py": "SCALE = 1.0\n",
        "model.py": """
            import tensorflow as tf
            import config as cfg

            @tf.function
            def loss(y_true, y_pred):
                return tf.reduce_mean(y_pred - y_true) * cfg.SCALE
        """,
        "train.py": """
            import tensorflow as tf
            import config
            from model import loss

            def train(batches):
                for epoch in range(10):
                    config.SCALE = epoch / 10
                    for x, y in batches:
                        loss(y, x)
        """,
    }
    assert _run(tmp_path, files, ("TFR201",)) == [("model.py", 6, "TFR201")]


def test_a_module_attribute_set_once_at_import_is_not_frozen_state(tmp_path):
    files = {
        "config.py": "SCALE = 1.0\nSCALE = 2.0\n",
        "model.py": """
            import tensorflow as tf
            import config

            @tf.function
            def loss(y_true, y_pred):
                return tf.reduce_mean(y_pred - y_true) * config.SCALE
        """,
    }
    assert _run(tmp_path, files, ("TFR201",)) == []


def test_a_dataset_map_function_reading_a_counter_is_still_frozen_state():
    """One pipeline, iterated every epoch: `self._epoch` counted up per epoch
    is read once, when `.map` traced the function."""
    source = """
        import tensorflow as tf

        class Adapter:
            def __init__(self, indices):
                self._epoch = 0
                self.dataset = tf.data.Dataset.from_tensors(indices).map(self._shuffle)

            def _shuffle(self, indices):
                return tf.random.experimental.stateless_shuffle(
                    indices, seed=tf.stack([tf.convert_to_tensor(self._epoch), 0])
                )

            def on_epoch_end(self):
                self._epoch += 1
    """
    [finding] = check_source(_d(source), select=["TFR201"])
    assert "`self._epoch`" in finding.message


HOLDER = """
    import tensorflow as tf
    from buffer import ReplayBuffer


    class Agent:
        def __init__(self):
            self.memory = ReplayBuffer()
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            self.opt = tf.keras.optimizers.Adam()

        def update(self):
            x, y = self.memory.sample(32)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((self.model(x, training=True) - y) ** 2)
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.model.trainable_variables))

        def train(self):
            for step in range(100):
                self.update()
"""
SAMPLING_BUFFER = """
    import numpy as np


    class ReplayBuffer:
        def __init__(self):
            self.items = np.zeros((1000, 2), dtype=np.float32)

        def sample(self, n):
            rows = self.items[np.random.randint(0, 1000, n)]
            return rows[:, :1], rows[:, 1:]
"""


def _step_finding(tmp_path: Path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(_d(text))
    result = run(
        [InputFile(str(tmp_path / n)) for n in files],
        RunOptions(rule_codes=("TFR302",), root=str(tmp_path), unsafe_fixes=True),
        jobs=1,
    )
    (step,) = result.findings
    return step


def test_a_step_sampling_a_replay_buffer_of_another_module_is_not_decorated(
    tmp_path: Path,
) -> None:
    """`self.memory.sample(32)` of the project's plain `ReplayBuffer` (its own
    module, which names no TensorFlow): traced, the sampling would run once
    and every call would train on that first batch. It was a safe fix."""
    step = _step_finding(tmp_path, {"agent.py": HOLDER, "buffer.py": SAMPLING_BUFFER})
    assert step.fix is None
    expected = (
        "line 12 calls `self.memory.sample(...)`, a method of the Python class `ReplayBuffer`"
    )
    assert expected in step.message


def test_a_class_reached_through_a_star_import_is_seen(tmp_path: Path) -> None:
    holder = HOLDER.replace("from buffer import ReplayBuffer", "from buffer import *")
    step = _step_finding(tmp_path, {"agent.py": holder, "buffer.py": SAMPLING_BUFFER})
    assert step.fix is None and "`ReplayBuffer`" in step.message


def test_a_held_object_of_a_class_nobody_shows_makes_the_decoration_unsafe(
    tmp_path: Path,
) -> None:
    """The buffer's module is not in the project: its `sample` may be plain
    Python, so the decoration is offered only as an unsafe fix that says why."""
    step = _step_finding(tmp_path, {"agent.py": HOLDER})
    assert step.fix is not None and step.fix.applicability.value == "unsafe"
    assert "it calls `self.memory.sample(...)` on an object whose class tfrewrite cannot see" in (
        step.fix.message
    )


def test_a_held_keras_model_of_another_module_keeps_the_decoration_safe(
    tmp_path: Path,
) -> None:
    """A method of a project Keras model (`self.memory.sample` of a `Model`
    subclass) runs TensorFlow ops: traced, it is traced with the step."""
    model = """
        import tensorflow as tf


        class ReplayBuffer(tf.keras.Model):
            def sample(self, n):
                x = tf.random.normal((n, 1))
                return x, 2 * x
    """
    step = _step_finding(tmp_path, {"agent.py": HOLDER, "buffer.py": model})
    assert step.fix is not None and step.fix.applicability.value == "safe"


STARRED = """
    from utils import *


    class Agent:
        def __init__(self):
            self.critic = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            self.opt = tf.keras.optimizers.SGD(0.1)

        def c_train(self, r, s):
            r = np.array(r, dtype=np.float32)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(r - self.critic(s, training=True)))
            grads = tape.gradient(loss, self.critic.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.critic.trainable_variables))

        def train(self, batches):
            for r, s in batches:
                self.c_train(r, s)
"""
STAR_SOURCE = """
    import numpy as np
    import tensorflow as tf
"""


def test_names_a_star_import_brings_from_a_project_module_are_resolved(tmp_path: Path) -> None:
    """`np` and `tf` come from `from utils import *`: `np.array(r)` on the
    step's argument is NumPy, which raises on a symbolic tensor. It was a
    safe fix that crashed when traced."""
    step = _step_finding(tmp_path, {"agent.py": STARRED, "utils.py": STAR_SOURCE})
    assert step.fix is None and "line 10 calls `numpy.array`" in step.message


def test_a_star_import_of_a_module_nobody_shows_makes_the_decoration_unsafe(
    tmp_path: Path,
) -> None:
    starred = STARRED.replace("r = np.array(r, dtype=np.float32)", "r = tf.cast(r, tf.float32)")
    step = _step_finding(tmp_path, {"agent.py": starred})
    assert step.fix is not None and step.fix.applicability.value == "unsafe"
    assert "`from `utils` import *`" not in step.fix.message
    assert "takes names from `from utils import *`" in step.fix.message
    # With the module in the project, what the names are is known.
    step = _step_finding(tmp_path, {"agent.py": starred, "utils.py": STAR_SOURCE})
    assert step.fix is not None and step.fix.applicability.value == "safe"


def test_numpy_named_through_a_star_import_is_reported_in_traced_code(tmp_path: Path) -> None:
    """TFR104 decides from pass 1 whether a file can have NumPy calls in
    traced code: `np.mean` with `np` from `from utils import *` counts."""
    traced = """
        from utils import *


        @tf.function
        def normalize(x):
            return x - np.mean(x)
    """
    found = _run(tmp_path, {"model.py": traced, "utils.py": STAR_SOURCE}, ("TFR104",))
    assert found == [("model.py", 6, "TFR104")]


def test_a_method_of_a_tensorflow_object_is_not_a_plain_class_method() -> None:
    """`tape.gradient(...)` where a plain class of the file also has a
    `gradient` method (TRPO's): the tape is TensorFlow's, no blocker."""
    source = _d(
        """
        import tensorflow as tf


        class Trpo:
            def gradient(self, params):
                return params


        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.SGD()


        def c_train(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x, training=True) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))


        for step in range(3):
            c_train(tf.ones((2, 1)), tf.ones((2, 1)))
        """
    )
    (step,) = check_source(source, select=["TFR302"])
    assert step.fix is not None and step.fix.applicability.value == "safe", step.message
