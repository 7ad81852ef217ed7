"""Minimal reproductions of problems seen running tfrewrite on public TF2
research code (GANs, diffusion models, ensembles, RL agents) as a new user
would: each test is one pattern, paraphrased."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


ENSEMBLE = """
    import tensorflow as tf


    def build():
        return tf.keras.Sequential([tf.keras.layers.Dense(1)])


    def main(dataset, members):
        for member in range(members):
            model = build()
            optimizer = tf.keras.optimizers.Adam(0.01)
            for x, y in dataset:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_weights)
                optimizer.apply_gradients(zip(grads, model.trainable_weights))
"""


def test_an_inline_step_of_a_model_built_per_ensemble_member_is_not_extracted():
    """The step would be defined once, before the member loop, and handed a
    new model and optimizer per member: the second member's variables would
    be created in a second trace, which raises."""
    [finding] = check_source(_d(ENSEMBLE), select=["TFR303"])
    assert finding.fix is None
    assert "line 10 builds a new `model` on each pass of the loop" in finding.message
    assert "singleton tf.Variables created on the first call" in finding.message


def test_an_inline_step_of_an_optimizer_built_per_fold_is_not_extracted():
    """The model is built once, the optimizer per fold: the same failure."""
    source = _d(ENSEMBLE).replace("        model = build()\n", "")
    source = source.replace("    for member in", "    model = build()\n    for member in")
    [finding] = check_source(source, select=["TFR303"])
    assert finding.fix is None
    assert "builds a new `optimizer` on each pass of the loop" in finding.message


def test_an_inline_step_of_objects_built_before_the_loops_is_still_extracted():
    source = _d(ENSEMBLE).replace("        model = build()\n", "")
    source = source.replace("        optimizer = tf.keras.optimizers.Adam(0.01)\n", "")
    source = source.replace(
        "    for member in",
        "    model = build()\n    optimizer = tf.keras.optimizers.Adam(0.01)\n    for member in",
    )
    fixed = fix_source(source, select=["TFR303"], unsafe_fixes=True)
    assert "def train_step(x, y):" in fixed, fixed


SETTLED_SIZE = """
    import tensorflow as tf


    def main(flags, builder, dataset):
        steps_per_epoch = flags.size // flags.batch_size
        steps_per_epoch = builder.num_examples // flags.batch_size

        @tf.function
        def train_step(iterator):
            for _ in tf.range(tf.cast(steps_per_epoch, tf.int32)):
                tf.print(next(iterator))

        for epoch in range(flags.epochs):
            train_step(iter(dataset))
"""


def test_a_variable_rebound_only_before_the_step_is_defined_is_not_frozen_state():
    """A size set from the flags, then from the dataset builder, all before
    the traced step is defined: every trace sees its final value."""
    assert check_source(_d(SETTLED_SIZE), select=["TFR201"]) == []


def test_a_variable_rebound_after_the_step_is_defined_is_still_frozen_state():
    source = _d(SETTLED_SIZE).replace(
        "    for epoch in range(flags.epochs):\n",
        "    steps_per_epoch = 2 * steps_per_epoch\n    for epoch in range(flags.epochs):\n",
    )
    [finding] = check_source(source, select=["TFR201"])
    assert "`steps_per_epoch` is Python state (a variable of `main` it rebinds)" in finding.message


def test_a_variable_the_loop_around_the_step_rebinds_is_still_frozen_state():
    source = _d(SETTLED_SIZE).replace(
        "        train_step(iter(dataset))\n",
        "        train_step(iter(dataset))\n        steps_per_epoch = epoch + 1\n",
    )
    [finding] = check_source(source, select=["TFR201"])
    assert "`steps_per_epoch`" in finding.message


GRADIENT_PENALTY = """
    import tensorflow as tf


    def critic_step(discriminator, optimizer, real):
        with tf.GradientTape() as tape:
            with tf.GradientTape() as inner:
                inner.watch(real)
                score = tf.reduce_sum(discriminator(real))
            penalty = tf.square(tf.norm(inner.gradient(score, real)) - 1.0)
            loss = -score + 10.0 * penalty
        grads = tape.gradient(loss, discriminator.trainable_variables)
        optimizer.apply_gradients(zip(grads, discriminator.trainable_variables))
"""


def test_a_model_call_in_a_nested_gradient_penalty_tape_is_reported_once():
    """The discriminator call sits in both tapes; it is one finding, one fix."""
    [finding] = check_source(_d(GRADIENT_PENALTY), select=["TFR304"])
    assert finding.start.line == 8
    fixed = fix_source(_d(GRADIENT_PENALTY), select=["TFR304"], unsafe_fixes=True)
    assert "discriminator(real, training=True)" in fixed


REPLICA_STEP = """
    import tensorflow as tf


    @tf.function
    def ensemble_crossentropy(labels, logits):
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))


    def main(strategy, model, optimizer, dataset):
        @tf.function
        def train_step(iterator):
            def step_fn(inputs):
                images, labels = inputs
                with tf.GradientTape() as tape:
                    loss = ensemble_crossentropy(labels, model(images, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            strategy.run(step_fn, args=(next(iterator),))

        iterator = iter(dataset)
        for _ in range(10):
            train_step(iterator)
"""


def test_a_loss_a_traced_steps_replica_function_calls_is_a_redundant_boundary():
    """The per-replica `step_fn` handed to `strategy.run` inside a traced
    step is traced with it: the loss's decorator is not all that is compiled."""
    [finding] = check_source(_d(REPLICA_STEP), select=["TFR301"])
    assert "the train step `step_fn` that calls it is already traced" in finding.message
    fixed = fix_source(_d(REPLICA_STEP), select=["TFR301"])
    assert "@tf.function\ndef ensemble_crossentropy" not in fixed


KERAS_LOSS = """
    import tensorflow as tf


    class AdaptiveScaleLoss(tf.keras.losses.Loss):
        @tf.function
        def call(self, y_true, y_pred):
            return tf.reduce_mean(tf.square(y_true - y_pred))
"""


def test_a_keras_loss_call_decorator_is_described_as_redundant_under_fit():
    [finding] = check_source(_d(KERAS_LOSS), select=["TFR301"])
    assert "`fit` traces a loss given to `compile` with its train step" in finding.message


HAND_DRAWN_BATCH = """
    import numpy as np
    import tensorflow as tf


    def main(model, optimizer, epochs):
        x_train = np.random.rand(64, 3).astype("float32")
        y_train = np.random.rand(64, 1).astype("float32")
        for epoch in range(epochs):
            perm = np.random.permutation(64)
            for batch in tf.data.Dataset.range(4):
                with tf.GradientTape() as tape:
                    idx = perm[:16]
                    pred = model(x_train[idx], training=True)
                    loss = tf.reduce_mean(tf.square(pred - y_train[idx]))
                grads = tape.gradient(loss, model.trainable_weights)
                optimizer.apply_gradients(zip(grads, model.trainable_weights))
"""


def test_an_inline_step_indexing_a_numpy_array_with_a_handed_array_is_not_extracted():
    """`perm` would become a tensor argument, `x_train` stays the NumPy array
    the step closes over: NumPy cannot index with a symbolic tensor."""
    [finding] = check_source(_d(HAND_DRAWN_BATCH), select=["TFR303"])
    assert finding.fix is None
    assert "line 13 indexes the NumPy array `x_train` with `perm`" in finding.message


def test_an_inline_step_indexing_a_numpy_array_with_a_range_counter_is_not_refused_for_it():
    """A `range` counter stays a Python number: NumPy indexes with it (its
    retracing is another matter)."""
    source = _d(HAND_DRAWN_BATCH).replace("tf.data.Dataset.range(4)", "range(4)")
    source = source.replace("idx = perm[:16]", "idx = batch")
    [finding] = check_source(source, select=["TFR303"])
    assert "indexes the NumPy array" not in finding.message


FILTER_ASCENT = """
    import tensorflow as tf


    def ascent_step(feature_extractor, image_var, filter_index, optimizer):
        with tf.GradientTape() as tape:
            tape.watch(image_var)
            activation = feature_extractor(tf.expand_dims(image_var[0], 0))
            loss = tf.reduce_mean(activation[..., filter_index])
        grads = tape.gradient(loss, image_var)
        grads = tf.math.l2_normalize(grads)
        optimizer.apply_gradients(zip(grads * -1, image_var))
        return loss, image_var


    def visualize(feature_extractor, image, optimizer):
        image_var = [tf.Variable(image)]
        for _ in range(30):
            loss, image_var = ascent_step(feature_extractor, image_var, 0, optimizer)
        return image_var[0].numpy()
"""


def test_a_step_zipping_a_stacked_gradient_tensor_is_not_decorated():
    """`l2_normalize` stacks the list of gradients into one tensor; `zip`
    iterates over it, which only eager execution allows."""
    [finding] = check_source(_d(FILTER_ASCENT), select=["TFR302"])
    assert finding.fix is None
    assert "line 11 iterates over the tensor `grads * -1` in Python with `zip(...)`" in (
        finding.message
    )


def test_a_step_zipping_a_list_of_gradients_is_still_decorated():
    source = _d(FILTER_ASCENT).replace("    grads = tf.math.l2_normalize(grads)\n", "")
    source = source.replace("zip(grads * -1, image_var)", "zip(grads, image_var)")
    fixed = fix_source(source, select=["TFR302"])
    assert "@tf.function\ndef ascent_step" in fixed


def test_a_model_called_for_gradient_ascent_on_its_input_is_not_reported():
    """The step watches and updates the image; the feature extractor is
    frozen, and `training=True` would switch its batch normalization."""
    assert check_source(_d(FILTER_ASCENT), select=["TFR304"]) == []


UNPACKED_SHAPE = """
    import tensorflow as tf


    def train_step(model, optimizer, x, y):
        batch, width = tf.shape(x)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(model(x, training=True) - y)) / tf.cast(batch, "float32")
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


    def fit(model, optimizer, batches):
        for x, y in batches:
            train_step(model, optimizer, x, y)
"""


def test_a_step_unpacking_a_dynamic_shape_is_not_decorated():
    [finding] = check_source(_d(UNPACKED_SHAPE), select=["TFR302"])
    assert finding.fix is None
    assert "iterates over the tensor `tf.shape(x)` in Python with an unpacking assignment" in (
        finding.message
    )


def test_a_step_unpacking_an_op_that_returns_a_tuple_is_still_decorated():
    """`tf.clip_by_global_norm` returns the clipped list and the norm: a
    Python tuple, which unpacks traced as well as eagerly."""
    source = _d(UNPACKED_SHAPE).replace(
        "    batch, width = tf.shape(x)\n", "    batch = tf.shape(x)[0]\n"
    )
    source = source.replace(
        "    optimizer.apply_gradients",
        "    grads, _ = tf.clip_by_global_norm(grads, 5.0)\n    optimizer.apply_gradients",
    )
    assert "clip_by_global_norm" in source and "batch = tf.shape(x)[0]" in source
    fixed = fix_source(source, select=["TFR302"])
    assert "@tf.function\ndef train_step" in fixed, fixed
