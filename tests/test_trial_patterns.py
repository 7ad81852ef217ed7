"""Minimal reproductions of problems seen running tfrewrite on public TF2
examples and notebooks as a new user would: each test is one pattern."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


SHADOWED_COUNTER = """
    import tensorflow as tf

    global_step = 0
    for _ in range(3):
        global_step += 1


    @tf.function
    def train(ds):
        global_step = 0
        for x in ds:
            global_step += 1

            def show():
                tf.print(global_step)

            tf.cond(global_step > 1, show, lambda: None)
"""


def test_a_nested_function_reads_its_enclosing_functions_variable_not_the_modules():
    """A notebook counts `global_step` in one cell's loop and again inside a
    later traced `train`: the nested `show()` (what the `tf.cond` fix of
    `if tf.equal(global_step % 100, 0)` defines) reads `train`'s local."""
    assert check_source(_d(SHADOWED_COUNTER), select=["TFR201"]) == []


def test_a_global_declaration_in_the_enclosing_function_keeps_the_module_name():
    source = _d(SHADOWED_COUNTER).replace(
        "def train(ds):\n", "def train(ds):\n    global global_step\n"
    )
    [finding] = check_source(source, select=["TFR201"])
    assert "`global_step`" in finding.message and "train.show" in finding.message


SECTIONS_WITH_NEW_OBJECTS = """
    import tensorflow as tf


    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(2)

        def call(self, x):
            return self.dense(x)


    def train_step(net, x, optimizer):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(net(x))
        grads = tape.gradient(loss, net.trainable_variables)
        optimizer.apply_gradients(zip(grads, net.trainable_variables))
        return loss


    opt = tf.keras.optimizers.Adam(0.1)
    net = Net()
    for x in batches:
        train_step(net, x, opt)

    opt = tf.keras.optimizers.Adam(0.1)
    net = Net()
    for x in batches:
        train_step(net, x, opt)
"""


def test_a_step_handed_a_new_model_and_optimizer_is_not_decorated():
    """A notebook section that starts again with `net = Net()` and a new
    optimizer calls the same step with them: decorated, the second trace would
    have to create their variables, which a `tf.function` refuses."""
    [finding] = check_source(_d(SECTIONS_WITH_NEW_OBJECTS), select=["TFR302"])
    assert finding.fix is None
    assert (
        "builds a new model, optimizer or metric the step is handed: it creates its variables on "
        "first use, inside a second trace" in finding.message
    )
    assert "(lines 26-27)" in finding.message


def test_a_step_reading_a_model_a_later_section_builds_again_is_not_decorated():
    source = (
        _d(SECTIONS_WITH_NEW_OBJECTS)
        .replace("def train_step(net, x, optimizer):", "def train_step(x):")
        .replace("train_step(net, x, opt)", "train_step(x)")
        .replace("optimizer.apply", "opt.apply")
    )
    [finding] = check_source(source, select=["TFR302"])
    assert finding.fix is None
    assert "builds a new model, optimizer or metric the step reads" in finding.message


def test_one_model_and_optimizer_per_step_definition_is_decorated():
    """One section alone, a section that defines its step again, or a model
    built in one branch of an `if` or the other: each step meets one object."""
    source = _d(SECTIONS_WITH_NEW_OBJECTS)
    first_section = source[: source.index("\nopt = ", source.index("train_step(net, x, opt)"))]
    step = source[source.index("def train_step") : source.index("\n\nopt = ")]
    second = source.index("for x", source.index("train_step(net, x, opt)"))
    again = source[:second] + step + "\n\n\n" + source[second:]
    branches = first_section.replace(
        "net = Net()\n", "if small:\n    net = Net()\nelse:\n    net = tf.keras.Sequential()\n"
    )
    for variant, steps in ((first_section, 1), (again, 2), (branches, 1)):
        findings = check_source(variant, select=["TFR302"])
        assert len(findings) == steps
        assert all(f.fix is not None for f in findings), [f.message for f in findings]


POSITIONAL_TRAINING = """
    import tensorflow as tf


    class Transformer(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(2)
            self.dropout = tf.keras.layers.Dropout(0.5)

        def call(self, inp, training, mask):
            return self.dropout(self.dense(inp), training=training)


    transformer = Transformer()
    optimizer = tf.keras.optimizers.Adam()


    @tf.function
    def train_step(inp):
        with tf.GradientTape() as tape:
            predictions = transformer(inp, True, None)
            loss = tf.reduce_mean(predictions)
        gradients = tape.gradient(loss, transformer.trainable_variables)
        optimizer.apply_gradients(zip(gradients, transformer.trainable_variables))
"""


def test_a_model_given_its_training_flag_positionally_is_not_reported():
    """The TensorFlow transformer tutorial calls `transformer(inp, tar_inp,
    True, masks...)`: `training` is the third positional argument of its
    `call`, and adding `training=True` would pass it twice."""
    assert check_source(_d(POSITIONAL_TRAINING), select=["TFR304"]) == []
    starred = _d(POSITIONAL_TRAINING).replace("(inp, True, None)", "(*inputs)")
    assert check_source(starred, select=["TFR304"]) == []
    short = _d(POSITIONAL_TRAINING).replace("(inp, True, None)", "(inp)")
    [finding] = check_source(short, select=["TFR304"])
    assert finding.fix is not None


BACKBONE_STEP = """
    import tensorflow as tf


    class ClippedModel(tf.keras.Model):
        def __init__(self, backbone, clip_factor=0.01):
            super().__init__()
            self.backbone = backbone
            self.clip_factor = clip_factor

        def train_step(self, data):
            images, labels = data
            with tf.GradientTape() as tape:
                predictions = self.backbone(images)
                loss = self.compiled_loss(labels, predictions)
            params = self.backbone.trainable_variables
            gradients = tape.gradient(loss, params)
            gradients = [tf.clip_by_norm(g, self.clip_factor) for g in gradients]
            self.optimizer.apply_gradients(zip(gradients, params))
            return {"loss": loss}
"""


def test_a_model_the_step_differentiates_is_a_model_whatever_its_name():
    """An adaptive-gradient-clipping `train_step` wraps `self.mini_vgg`: no
    `model` in its name, but the step takes the gradient of its variables."""
    [finding] = check_source(_d(BACKBONE_STEP), select=["TFR304"])
    assert "`self.backbone(...)`" in finding.message and finding.fix is not None
    frozen = _d(BACKBONE_STEP).replace(
        "self.backbone(images)", "self.backbone(images) + self.head(images)"
    )
    [finding] = check_source(frozen, select=["TFR304"])  # `self.head` is not trained here
    assert "`self.backbone(...)`" in finding.message


ACCUMULATION = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)
    accumulated = [tf.Variable(tf.zeros_like(v)) for v in model.trainable_variables]
    count = 0
    for x, y in batches:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        accumulated = [a.assign_add(g) for a, g in zip(accumulated, grads)]
        count += 1
        if count == 2:
            optimizer.apply_gradients(zip(accumulated, model.trainable_variables))
            count = 0
            accumulated = [a.assign_sub(a) for a in accumulated]
"""


def test_an_inline_step_carrying_python_state_to_the_next_batch_is_not_extracted():
    """Gradient accumulation (EfficientDet's weight converter): the step
    would take and return `accumulated` and `count`, which come back from a
    `tf.function` as tensors, and `assign_add` on a tensor fails."""
    [finding] = check_source(_d(ACCUMULATION), select=["TFR303"])
    assert finding.fix is None
    assert "carries `accumulated` from one batch to the next" in finding.message


CARRIED_TENSOR = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)
    total = tf.zeros(())
    for x, y in batches:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            total = total + loss
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_a_tensor_the_step_carries_to_the_next_batch_is_returned():
    """Read and rebound only inside the step, `total` is still the next
    batch's input: the step takes it and gives it back."""
    fixed = fix_source(_d(CARRIED_TENSOR), select=["TFR303"], unsafe_fixes=True)
    assert "total = train_step(x, y, total)" in fixed, fixed
    assert "return total" in fixed


REBOUND_PARAMETER = """
    import tensorflow as tf

    layer = tf.keras.layers.Dense(1)


    @tf.function
    def f(x):
        if x > 0:
            x = x * x
        x = layer(tf.reshape(x, (1, 1)))
        return x


    f(tf.constant(2.0))
"""


def test_a_parameter_tested_before_it_is_rebound_is_still_its_tensor_argument():
    """An AutoGraph tutorial tests `x > 0` on its argument and rebinds `x`
    afterwards (to a layer's output, or to `0` in an `else`): at the test, `x`
    is still the tensor argument, whatever the later bindings are."""
    source = _d(REBOUND_PARAMETER)
    fixed = fix_source(source, select=["TFR101"])
    assert "x = tf.cond(x > 0, lambda: x * x, lambda: x)\n" in fixed, fixed
    python_zero = source.replace("x = layer(tf.reshape(x, (1, 1)))", "").replace(
        "x = x * x", "x = x * x\n    else:\n        x = 0"
    )
    [finding] = check_source(python_zero, select=["TFR101"])
    assert finding.fix is None and "'x' is a Python int in the false branch" in finding.message


EPISODE_UPDATE = """
    import numpy as np
    import tensorflow as tf

    policy = tf.keras.Sequential([tf.keras.layers.Dense(2, activation="softmax")])
    optimizer = tf.keras.optimizers.Adam(1e-3)


    def update(states, actions, returns):
        with tf.GradientTape() as tape:
            probs = policy(states, training=True)
            picked = tf.reduce_sum(tf.one_hot(actions, 2) * probs, axis=-1)
            loss = -tf.reduce_mean(returns * tf.math.log(picked))
        grads = tape.gradient(loss, policy.trainable_variables)
        optimizer.apply_gradients(zip(grads, policy.trainable_variables))


    for episode in range(3):
        states = np.ones((4, 3), np.float32)
        actions = np.array([0, 1, 1, 0])
        returns = np.zeros(4)
        update(states, actions, returns)
"""


def test_a_step_handed_a_float64_numpy_array_it_mixes_with_tensors_is_not_decorated():
    """A policy-gradient tutorial builds the returns with `np.zeros(T)`:
    eagerly `returns * log(...)` converts them to float32, traced they are a
    float64 tensor argument and the product raises."""
    [finding] = check_source(_d(EPISODE_UPDATE), select=["TFR302"])
    assert finding.fix is None
    assert "makes `returns` a NumPy array" in finding.message
    assert "`returns * tf.math.log(picked)`" in finding.message
    # `actions` (int64) only goes to `tf.one_hot`, `states` only to the model.
    assert "`actions`" not in finding.message and "`states`" not in finding.message


def test_a_float32_or_recast_numpy_array_does_not_block_the_decorator():
    for source in (
        EPISODE_UPDATE.replace("np.zeros(4)", "np.zeros(4, dtype=np.float32)"),
        EPISODE_UPDATE.replace(
            "    def update(states, actions, returns):\n",
            "    def update(states, actions, returns):\n"
            "        returns = tf.cast(returns, tf.float32)\n",
        ),
    ):
        [finding] = check_source(_d(source), select=["TFR302"])
        assert finding.fix is not None, finding.message


INLINE_EPISODE_UPDATE = """
    import numpy as np
    import tensorflow as tf

    policy = tf.keras.Sequential([tf.keras.layers.Dense(2, activation="softmax")])
    optimizer = tf.keras.optimizers.Adam(1e-3)
    for episode in range(3):
        trajectory = [(np.ones(3), 0, 1.0), (np.ones(3), 1, 0.5)]
        states, actions, rewards = [np.array(part) for part in zip(*trajectory)]
        with tf.GradientTape() as tape:
            probs = policy(states, training=True)
            picked = tf.reduce_sum(tf.one_hot(actions, 2) * probs, axis=-1)
            loss = -tf.reduce_mean(rewards * tf.math.log(picked))
        grads = tape.gradient(loss, policy.trainable_variables)
        optimizer.apply_gradients(zip(grads, policy.trainable_variables))
"""


def test_an_inline_step_that_would_take_a_numpy_array_it_mixes_with_tensors_is_not_extracted():
    [finding] = check_source(_d(INLINE_EPISODE_UPDATE), select=["TFR303"])
    assert finding.fix is None
    assert "makes `rewards` a NumPy array" in finding.message
    done = INLINE_EPISODE_UPDATE.replace(
        "[np.array(part) for part in zip(*trajectory)]", "map(np.array, zip(*trajectory))"
    )
    [finding] = check_source(_d(done), select=["TFR303"])
    assert finding.fix is None and "makes `rewards` a NumPy array" in finding.message


WRAPPED_STEPS = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)
    calls = []


    def replicated(fun):
        @tf.function
        def wrapper(*args):
            return tf.distribute.get_strategy().run(fun, args=args)

        return wrapper


    def counted(fun):
        def wrapper(*args):
            calls.append(1)
            return fun(*args)

        return wrapper


    @replicated
    def step_a(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    @counted
    def step_b(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    for i in range(3):
        step_a(tf.ones((2, 3)), tf.ones((2, 1)))
        step_b(tf.ones((2, 3)), tf.ones((2, 1)))
"""


def test_a_step_whose_decorator_returns_a_tf_function_is_not_reported():
    """A GAN course wraps its step in `@distributed(...)`, a factory whose
    wrapper is a `tf.function` running the step through `strategy.run`: the
    step already runs traced. A wrapper tfrewrite cannot see through keeps
    the finding, with an unsafe fix: `@tf.function` would trace it too."""
    [finding] = check_source(_d(WRAPPED_STEPS), select=["TFR302"])
    assert "`step_b`" in finding.message
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert "wrapped by `@counted`" in finding.fix.message


LOSS_ALSO_EVALUATED = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.Adam(1e-3)


    @tf.function
    def compute_loss(model, x):
        return tf.reduce_mean(tf.square(model(x)))


    @tf.function
    def train_step(model, x, optimizer):
        with tf.GradientTape() as tape:
            loss = compute_loss(model, x)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


    for epoch in range(3):
        for x in [tf.ones((2, 3))]:
            train_step(model, x, optimizer)
        total = tf.keras.metrics.Mean()
        for x in [tf.ones((2, 3))]:
            total(compute_loss(model, x))
"""


def test_a_loss_an_eager_evaluation_loop_also_calls_keeps_its_decorator():
    """A VAE notebook decorates `compute_loss`, which the decorated step
    calls and the per-epoch test loop calls directly: for the test loop the
    decorator is the only tracing, not a redundant boundary."""
    assert check_source(_d(LOSS_ALSO_EVALUATED), select=["TFR301"]) == []
    train_only = _d(LOSS_ALSO_EVALUATED).split("    total = ")[0]
    [finding] = check_source(train_only, select=["TFR301"])
    assert "nested, redundant graph boundary" in finding.message


def test_a_loss_parameter_named_like_a_module_loop_variable_is_not_module_state():
    """`def compute_loss(model, x)` in a file whose loop binds `x`: the loss
    reads its argument, and no frozen module state is claimed."""
    train_only = _d(LOSS_ALSO_EVALUATED).split("    total = ")[0]
    [finding] = check_source(train_only, select=["TFR301"])
    assert "module state" not in finding.message


COUNTED_BATCHES = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)
    batch_index = 0
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        tf.print("batch", batch_index, "loss", loss)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        batch_index += 1
"""


def test_an_inline_step_reading_the_loops_python_counter_is_not_extracted():
    """A handbook's preloaded-MNIST loop prints `batch_index` with
    `tf.print` between the tape and the update: the extracted step would
    take the Python int and trace again on every batch."""
    [finding] = check_source(_d(COUNTED_BATCHES), select=["TFR303"])
    assert finding.fix is None
    assert "reads `batch_index`, a Python number the loop changes" in finding.message
    ranged = (
        _d(COUNTED_BATCHES)
        .replace("for x, y in dataset:", "for step in range(10):")
        .replace("batch_index", "step")
        .replace("    step += 1\n", "")
    )
    [finding] = check_source(ranged, select=["TFR303"])
    assert finding.fix is None and "reads `step`" in finding.message
    untouched = _d(COUNTED_BATCHES).replace(
        '    tf.print("batch", batch_index, "loss", loss)\n', ""
    )
    [finding] = check_source(untouched, select=["TFR303"])
    assert finding.fix is not None


NESTED_COUNTED_STEP = """
    import tensorflow as tf


    def train(dataset):
        @tf.function
        def train_step(x, batch_index):
            tf.print("batch", batch_index, x)

        batch_index = 0
        for x in dataset:
            train_step(x, batch_index)
            batch_index += 1
"""


def test_a_nested_tf_function_called_with_a_python_counter_is_reported():
    """The step a tutorial defines inside its `train()` retraces on every
    batch just as a module-level one does."""
    [finding] = check_source(_d(NESTED_COUNTED_STEP), select=["TFR203"])
    assert "`batch_index`" in finding.message
    elsewhere = _d(NESTED_COUNTED_STEP) + _d(
        """
        def evaluate(dataset):
            for i in range(3):
                train_step(dataset, i)
        """
    )
    # `train_step` of `evaluate` is not `train`'s nested function.
    assert len(check_source(elsewhere, select=["TFR203"])) == 1


BLOCKED_STEP = """
    import random

    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)
    summaries = {}


    def replay(buffer):
        batch = random.sample(buffer, 2)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(tf.stack(batch), training=True)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        summaries["loss"] = loss


    for episode in range(3):
        replay([tf.ones(3)] * 4)
"""


def test_what_a_step_that_stays_eager_would_do_traced_is_its_blockers():
    """An RL agent's `replay` cannot be decorated: what it would do traced
    is listed in TFR302's finding, and is no finding of its own, since the
    step runs eagerly."""
    findings = check_source(_d(BLOCKED_STEP))
    [step] = [f for f in findings if f.code == "TFR302"]
    assert step.fix is None
    assert "TFR106" in step.message or "TFR202" in step.message
    assert not [f for f in findings if f.code in ("TFR106", "TFR202")]


EXERCISE_SKELETON = """
    import tensorflow as tf

    for epoch in range(2):
        for step, x in enumerate(dataset):
            with tf.GradientTape() as tape:
                ### START CODE HERE ###
                None
            grads = None
            optimizer.apply_gradients(None)
            ### END CODE HERE
            loss_metric(loss)
"""


def test_an_exercise_skeleton_tape_block_is_not_extracted():
    """A course assignment leaves `None` in the tape for the student: moving
    it into a step would split its START/END markers between two places."""
    [finding] = check_source(_d(EXERCISE_SKELETON), select=["TFR303"])
    assert finding.fix is None and "computes nothing yet" in finding.message
    plain_arithmetic = _d(EXERCISE_SKELETON).replace(
        "### START CODE HERE ###\n            None", "loss = (w * x - 1.0) ** 2"
    )
    [finding] = check_source(plain_arithmetic, select=["TFR303"])
    assert "computes nothing yet" not in finding.message


SUM_IN_THE_TAPE = """
    import tensorflow as tf

    def fit(net, data, optimizer, epochs):
        for epoch in range(epochs):
            seen = 0
            running = 0
            for images, targets in data:
                seen += 1
                with tf.GradientTape() as tape:
                    out = net(images, training=True)
                    err = tf.reduce_mean(tf.abs(out - targets))
                    running += err
                    grads = tape.gradient(err, net.trainable_variables)
                    optimizer.apply_gradients(zip(grads, net.trainable_variables))
            print(epoch, running / seen)
"""


def test_python_state_carried_through_the_tape_block_is_named_where_written():
    """The sum is written inside the tape block, and the update too: the
    refusal names the statement as written (line 12), not the tape block the
    extraction rebuilt (which has no place in the file)."""
    [finding] = check_source(_d(SUM_IN_THE_TAPE), select=["TFR303"])
    assert finding.fix is None
    assert "line 12 carries `running` from one batch to the next" in finding.message
