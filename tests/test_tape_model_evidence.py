"""TFR304's evidence that a call in a train step's tape is a call of the
model the step trains: the object whose Keras variables the tape
differentiates is one, whatever its name and wherever its class lives; and
a function the tape runs (a loss helper) calls the model as if written in
the tape."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability
from tfrewrite.pipeline.engine import InputFile, RunOptions, run


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def _findings(source: str) -> list:
    return check_source(_d(source), select=["TFR304"])


def _fixed(source: str) -> str:
    return fix_source(_d(source), select=["TFR304"], unsafe_fixes=True)


# -- a trained object of a class from another module -----------------------------------

NETS = """
    import tensorflow as tf


    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.layers.Dense(3)
            self.bn = tf.keras.layers.BatchNormalization()

        def call(self, x):
            return self.bn(self.d(x))
"""

STEP = """
    import tensorflow as tf
    from nets import Net

    g = Net()
    opt = tf.keras.optimizers.Adam()


    @tf.function
    def step(batch):
        with tf.GradientTape() as tape:
            out = g(batch[0])
            loss = tf.reduce_mean(tf.abs(out - batch[1]))
        grads = tape.gradient(loss, g.trainable_weights)
        opt.apply_gradients(zip(grads, g.trainable_weights))
        return loss
"""


def test_an_object_whose_keras_weights_the_tape_differentiates_is_a_model(
    tmp_path: Path,
) -> None:
    """`g` has no model's name and its class lives in `nets.py`: the tape
    differentiates `g.trainable_weights`, so `g` is the Keras model the step
    trains."""
    (tmp_path / "nets.py").write_text(_d(NETS))
    (tmp_path / "step.py").write_text(_d(STEP))
    files = [InputFile(str(tmp_path / n)) for n in ("nets.py", "step.py")]
    options = RunOptions(rule_codes=("TFR304",), root=str(tmp_path), fix=True, unsafe_fixes=True)
    result = run(files, options, jobs=1)
    [fixed] = result.fixes_applied
    assert fixed.message.startswith("`g(...)` is called in a train step's tape without")
    assert fixed.fix is not None and fixed.fix.applicability is Applicability.UNSAFE
    by_name = {Path(r.path).name: r.fixed_source for r in result.files}
    assert by_name["nets.py"] is None
    assert by_name["step.py"] == _d(STEP).replace("g(batch[0])", "g(batch[0], training=True)")


def test_the_same_step_checked_alone_is_reported_and_fixed() -> None:
    [finding] = _findings(STEP)
    assert finding.start.line == 11 and finding.fix is not None
    assert _fixed(STEP) == _d(STEP).replace("g(batch[0])", "g(batch[0], training=True)")


def test_a_keras_only_member_read_at_module_level_is_the_evidence() -> None:
    """`g.summary()` says Keras even when the step names `trainable_variables`
    (which a `tf.Module` has too)."""
    source = _d(STEP).replace("g.trainable_weights", "g.trainable_variables")
    assert check_source(source, select=["TFR304"]) == []
    [finding] = check_source(source + "\ng.summary()\n", select=["TFR304"])
    assert finding.fix is not None


def test_a_differentiated_object_without_keras_evidence_is_not_a_model() -> None:
    """A `tf.Module` or a Sonnet module has `trainable_variables` too, and a
    `__call__` that takes no `training`: `training=True` would raise."""
    source = """
        import tensorflow as tf
        from layers import Affine

        lin = Affine()
        opt = tf.keras.optimizers.SGD(0.1)

        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((lin(x) - y) ** 2)
            grads = tape.gradient(loss, lin.trainable_variables)
            opt.apply_gradients(zip(grads, lin.trainable_variables))
    """
    assert _findings(source) == []


def test_a_module_importing_tensorlayer_has_no_keras_evidence() -> None:
    """TensorLayer's models have `trainable_weights` too, and take `is_train`."""
    source = """
        import tensorflow as tf
        import tensorlayer as tl

        class Sac:
            def update(self, state, action, target):
                with tf.GradientTape() as tape:
                    q = self.soft_q_net1([state, action])
                    loss = tf.reduce_mean((q - target) ** 2)
                grads = tape.gradient(loss, self.soft_q_net1.trainable_weights)
                self.opt.apply_gradients(zip(grads, self.soft_q_net1.trainable_weights))
    """
    assert _findings(source) == []
    assert len(_findings(source.replace("import tensorlayer as tl\n", ""))) == 1


def test_a_known_class_without_training_layers_is_not_reported() -> None:
    """The class is in the file and holds no dropout or batch normalization:
    not reported: `training=True` would change nothing."""
    plain = _d(NETS).replace("        self.bn = tf.keras.layers.BatchNormalization()\n", "")
    plain = plain.replace("self.bn(self.d(x))", "self.d(x)")
    step = _d(STEP).replace("import tensorflow as tf\nfrom nets import Net\n", "")
    assert check_source(plain + step, select=["TFR304"]) == []


LINEAR_PROBE = """
    import tensorflow as tf
    from nets import Net

    enc = Net()
    enc.load_weights("encoder.weights.h5")
    probe = tf.keras.layers.Dense(10)
    opt = tf.keras.optimizers.Adam()


    def step(x, y):
        with tf.GradientTape() as tape:
            features = enc(x)
            logits = probe(features)
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, logits))
        grads = tape.gradient(loss, probe.trainable_weights)
        opt.apply_gradients(zip(grads, probe.trainable_weights))
"""


def test_a_frozen_encoder_of_a_linear_probe_stays_in_inference_mode() -> None:
    """The tape differentiates only the probe's weights: the encoder, a
    Keras model (`load_weights`), is frozen and stays unflagged; the probe,
    a `Dense` layer, computes the same either way and is not reported."""
    assert _findings(LINEAR_PROBE) == []
    assert _fixed(LINEAR_PROBE) == _d(LINEAR_PROBE)
    # A probe with dropout is fixed; the encoder still is not.
    dropout = _d(LINEAR_PROBE).replace(
        "probe = tf.keras.layers.Dense(10)", "probe = tf.keras.layers.Dropout(0.5)"
    )
    assert fix_source(dropout, select=["TFR304"], unsafe_fixes=True) == dropout.replace(
        "probe(features)", "probe(features, training=True)"
    )


def test_one_tape_per_network_trains_only_its_own() -> None:
    """A policy tape that differentiates the policy's weights calls the
    critic frozen, though another tape of the same step trains it."""
    source = """
        import tensorflow as tf

        class Agent:
            def update(self, s, a, target):
                with tf.GradientTape() as q_tape:
                    q_loss = tf.reduce_mean((self.q_net([s, a]) - target) ** 2)
                q_grads = q_tape.gradient(q_loss, self.q_net.trainable_weights)
                self.q_opt.apply_gradients(zip(q_grads, self.q_net.trainable_weights))
                with tf.GradientTape() as p_tape:
                    p_loss = -tf.reduce_mean(self.q_net([s, self.pi_net(s)]))
                p_grads = p_tape.gradient(p_loss, self.pi_net.trainable_weights)
                self.p_opt.apply_gradients(zip(p_grads, self.pi_net.trainable_weights))
    """
    findings = _findings(source)
    assert [(f.start.line, f.message.split("(")[0]) for f in findings] == [
        (6, "`self.q_net"),
        (10, "`self.pi_net"),
    ]


# -- a model called in a helper the tape runs --------------------------------------------

CRITIC = """
    import tensorflow as tf

    critic = tf.keras.Sequential(
        [tf.keras.layers.Dense(8), tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1)]
    )
    opt = tf.keras.optimizers.Adam()


    def critic_loss(real, fake):
        return tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(real))


    @tf.function
    def critic_step(real, fake):
        with tf.GradientTape() as tape:
            loss = critic_loss(real, fake)
        grads = tape.gradient(loss, critic.trainable_variables)
        opt.apply_gradients(zip(grads, critic.trainable_variables))
        return loss
"""

CRITIC_FIXED = _d(CRITIC).replace(
    "tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(real))",
    "tf.reduce_mean(critic(fake, training=True)) - tf.reduce_mean(critic(real, training=True))",
)


def test_a_model_called_in_a_helper_the_tape_runs_is_reported_there() -> None:
    findings = _findings(CRITIC)
    assert [(f.start.line, f.start.column) for f in findings] == [(10, 27), (10, 58)]
    assert findings[0].message == (
        "`critic(...)` is called without `training=True` in `critic_loss`, which runs in a "
        "train step's tape (`critic_step`, line 16): any dropout or batch normalization it "
        "holds runs in inference mode"
    )
    assert all(f.fix is not None for f in findings)
    assert _fixed(CRITIC) == CRITIC_FIXED


def test_a_helper_an_eval_function_also_calls_gets_no_fix() -> None:
    """`training=True` in `critic_loss` would switch `evaluate` to training
    mode too: reported, without a fix, naming the other caller."""
    source = _d(CRITIC) + _d(
        """

        def evaluate(real, fake):
            return critic_loss(real, fake)
        """
    )
    findings = check_source(source, select=["TFR304"])
    assert len(findings) == 2 and all(f.fix is None for f in findings)
    assert (
        "(no fix: `critic_loss` also runs where `critic` is not trained (line 21 in "
        "`evaluate`), and `training=True` would change what it computes there"
    ) in findings[0].message
    assert fix_source(source, select=["TFR304"], unsafe_fixes=True) == source


def test_a_helper_handed_around_as_a_value_gets_no_fix() -> None:
    source = _d(CRITIC) + "\nmetrics = {'critic': critic_loss}\n"
    findings = check_source(source, select=["TFR304"])
    assert len(findings) == 2 and all(f.fix is None for f in findings)


def test_a_model_passed_to_the_helper_is_the_one_the_step_trains() -> None:
    """`score(critic, fake)`: the helper's `net` is the step's `critic`, even
    through a second helper."""
    source = """
        import tensorflow as tf

        critic = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dropout(0.5)])

        def score(net, x):
            return tf.reduce_mean(net(x))

        def critic_loss(model, real, fake):
            return score(model, fake) - score(model, real)

        def critic_step(real, fake):
            with tf.GradientTape() as tape:
                loss = critic_loss(critic, real, fake)
            grads = tape.gradient(loss, critic.trainable_variables)
            opt.apply_gradients(zip(grads, critic.trainable_variables))
    """
    [finding] = _findings(source)
    assert finding.start.line == 6 and finding.fix is not None
    assert "in `score`, which runs in a train step's tape (`critic_step`, line 13)" in (
        finding.message
    )
    assert "return tf.reduce_mean(net(x, training=True))" in _fixed(source)


def test_a_frozen_encoder_called_in_a_helper_stays_in_inference_mode() -> None:
    source = """
        import tensorflow as tf

        encoder = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dropout(0.5)])
        head_model = tf.keras.Sequential([tf.keras.layers.Dense(2)])

        def features(x):
            return encoder(x)

        def step(x, y):
            with tf.GradientTape() as tape:
                logits = head_model(features(x), training=True)
                loss = tf.reduce_mean((logits - y) ** 2)
            grads = tape.gradient(loss, head_model.trainable_variables)
            opt.apply_gradients(zip(grads, head_model.trainable_variables))
    """
    assert _findings(source) == []


def test_a_helper_whose_model_name_the_step_shadows_is_not_matched() -> None:
    """The helper calls the global `critic`; the step trains its own
    parameter `critic`, maybe another object: nothing ties the two."""
    source = """
        import tensorflow as tf

        critic = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dropout(0.5)])

        def critic_loss(x):
            return tf.reduce_mean(critic(x))

        def step(critic, x):
            with tf.GradientTape() as tape:
                loss = critic_loss(x)
            grads = tape.gradient(loss, critic.trainable_variables)
            opt.apply_gradients(zip(grads, critic.trainable_variables))
    """
    assert _findings(source) == []


def test_a_method_a_keras_train_step_calls_in_its_tape() -> None:
    source = """
        import tensorflow as tf

        class Net(tf.keras.Model):
            def scores(self, x):
                return self(x)

            def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                    loss = self.compute_loss(y=y, y_pred=self.scores(x))
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                return {"loss": loss}
    """
    [finding] = _findings(source)
    assert finding.start.line == 5 and finding.fix is not None
    assert "return self(x, training=True)" in _fixed(source)


def test_a_held_model_of_a_known_class_without_training_layers_is_not_reported() -> None:
    """`self.critic = Critic()`, a class of this file with only `Dense`
    layers: the same policy as for `critic = Critic()`."""
    source = """
        import tensorflow as tf

        class Critic(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.out = tf.keras.layers.Dense(1)

            def call(self, x):
                return self.out(x)

        class Agent:
            def __init__(self):
                self.critic = Critic()

            def update(self, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((self.critic(x) - y) ** 2)
                grads = tape.gradient(loss, self.critic.trainable_weights)
                self.opt.apply_gradients(zip(grads, self.critic.trainable_weights))
    """
    assert _findings(source) == []


def test_a_helper_calling_a_model_that_ignores_training_is_not_reported() -> None:
    """Nothing changes today and the step's tape holds no call to point at."""
    source = _d(CRITIC).replace("tf.keras.layers.BatchNormalization(), ", "")
    assert check_source(source, select=["TFR304"]) == []


def test_an_eval_caller_check_leaves_unparsed_still_withholds_the_fix(tmp_path: Path) -> None:
    """`check` parses only the code its rules can need, and `evaluate` (an
    undecorated step's helper's other caller) may be left out: pass 1 saw
    its call, so `check` agrees with `fix` that there is no fix."""
    source = _d(CRITIC).replace("@tf.function\n", "") + _d(
        """

        def evaluate(real, fake):
            return critic_loss(real, fake)
        """
    )
    (tmp_path / "critic.py").write_text(source)
    for prune in (True, False):
        options = RunOptions(rule_codes=("TFR304",), root=str(tmp_path), prune_inert_code=prune)
        result = run([InputFile(str(tmp_path / "critic.py"))], options, jobs=1)
        assert len(result.findings) == 2 and all(f.fix is None for f in result.findings)
        message = result.findings[0].message
        assert "`critic_loss` also runs where `critic` is not trained (" in message
        assert "`evaluate`" in message


def test_a_helper_another_step_runs_with_the_model_frozen_gets_no_fix() -> None:
    """The generator's step runs `critic_loss` too, with the critic frozen."""
    source = _d(CRITIC) + _d(
        """

        def generator_step(real, fake):
            with tf.GradientTape() as tape:
                loss = -critic_loss(real, generator(fake, training=True))
            grads = tape.gradient(loss, generator.trainable_variables)
            opt.apply_gradients(zip(grads, generator.trainable_variables))
        """
    )
    findings = check_source(source, select=["TFR304"])
    assert len(findings) == 2 and all(f.fix is None for f in findings)
    assert "also runs where `critic` is not trained (line 22 in `generator_step`)" in (
        findings[0].message
    )


# -- models that train without the flag, and objects that are no Keras model ------------

DEFAULT_TRAINING = """
    import tensorflow as tf


    class Encoder(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(4)
            self.drop = tf.keras.layers.Dropout(0.5)

        def call(self, x, training={default}):
            return self.drop(self.dense(x), training=training)


    model = Encoder()
    optimizer = tf.keras.optimizers.Adam()


    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
"""


def test_a_model_whose_call_defaults_training_to_true_trains_without_the_flag() -> None:
    """Keras uses `call`'s default for `training` when neither the caller
    nor a call context gives it: `training=True` by default trains already,
    `training=False` (or None) does not."""
    assert _findings(DEFAULT_TRAINING.replace("{default}", "True")) == []
    assert [f.code for f in _findings(DEFAULT_TRAINING.replace("{default}", "None"))] == ["TFR304"]


MODULE_MODELS = """
    import tensorflow as tf


    class Linear(tf.Module):
        def __init__(self):
            self.w = tf.Variable(tf.ones([3, 1]))

        def __call__(self, x):
            return x @ self.w


    def loss_fn(model, x, y):
        return tf.reduce_mean(tf.square(model(x) - y))


    def fit(x, y, steps):
        model = Linear()
        optimizer = tf.keras.optimizers.SGD(0.1)
        for _ in range(steps):
            with tf.GradientTape() as tape:
                loss = loss_fn(model, x, y)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_a_tf_module_whose_call_takes_no_training_is_no_keras_model() -> None:
    """A `tf.Module` with its own `__call__(self, x)`: `training=True` would
    raise, and there is no dropout or batch normalization for it to switch."""
    assert _findings(MODULE_MODELS) == []


def test_a_model_called_with_its_input_by_keyword_is_a_model_call() -> None:
    """`self.encoder(inputs=x)`: Keras names a layer's input `inputs`; the
    call is the model's, reported and fixed as `model(x)` is."""
    source = """
        import tensorflow as tf


        class Trainer:
            def __init__(self, encoder: tf.keras.Model):
                self.encoder = encoder

            @tf.function
            def train_step(self, x, y, optimizer):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self.encoder(inputs=x) - y))
                variables = self.encoder.trainable_variables
                optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    """
    assert [f.code for f in _findings(source)] == ["TFR304"]
    assert "self.encoder(inputs=x, training=True)" in _fixed(source)


# -- a Sequential of its own, stacking project layers -------------------------------------

STACKED = """
    import tensorflow as tf


    class Relax(tf.keras.layers.Layer):
        def __init__(self, units):
            super().__init__()
            self.energy = tf.keras.Sequential([
                tf.keras.layers.Dense(units, activation="relu"),
                tf.keras.layers.Dense(1),
                tf.keras.layers.Lambda(lambda x: tf.squeeze(x, axis=-1)),
            ])

        def call(self, x):
            return x - 0.1 * self.energy(x)[:, None]


    class Stack(tf.keras.Sequential):
        def __init__(self, units):
            super().__init__([tf.keras.Input([4]), Relax(units)])


    model = Stack(8)
    optimizer = tf.keras.optimizers.SGD(0.1)
    for x in [tf.ones([2, 4])] * 3:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_a_sequential_subclass_of_layers_that_ignore_training_is_not_reported() -> None:
    """`Stack` has no `call` of its own: Keras' `Sequential.call` hands
    `training` to `Relax`, whose `call` takes none and whose `Sequential`
    holds a `Dense` and a `Lambda` of a TensorFlow op: nothing changes."""
    assert _findings(STACKED) == []
    dropout = STACKED.replace(
        "tf.keras.layers.Dense(1),",
        "tf.keras.layers.Dense(1),\n                tf.keras.layers.Dropout(0.5),",
    )
    assert [f.code for f in _findings(dropout)] == ["TFR304"]
    noisy = STACKED.replace("tf.squeeze(x, axis=-1)", "tf.keras.layers.Dropout(0.5)(x)[:, 0]")
    assert [f.code for f in _findings(noisy)] == ["TFR304"]
