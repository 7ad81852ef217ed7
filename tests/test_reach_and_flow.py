"""What blind sets 21 to 24 showed tfrewrite did not know, each written
small: a module-level object a factory made stands for what the factory
returns (`ds.map(load)` in another module); a Keras model method named
`train_step` that `fit` cannot call is an eager loop; what reaches a
`return` of a helper that rebinds its parameter; the terms of a loss kept
in names and containers of the tape; branches only eager execution takes;
`and`/`or`/`not` testing a tensor (TFR109); `compile(run_eagerly=True)`
(TFR307); what a function of another module does with what it is given
(averages it) and returns (batches of one size); `training` reaching the
layers of a model of another module."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.facts.index import build_index
from tfrewrite.pipeline.engine import InputFile, RunOptions, run


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def _check(root: Path, files: dict[str, str], codes: tuple[str, ...]) -> list[tuple[str, int, str]]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_d(text), encoding="utf-8")
    options = RunOptions(rule_codes=codes, root=str(root))
    result = run([InputFile(str(root / name)) for name in files], options, jobs=1)
    return sorted(
        (str(Path(f.path).relative_to(root)), f.start.line, f.code) for f in result.findings
    )


# -- a module-level object a factory made, handed to a tracer ----------------------

LOADERS = """
    import random

    import tensorflow as tf


    def jitter(image):
        if tf.random.uniform(()) < 0.5:
            image = tf.image.flip_up_down(image)
        return image


    def make_loader(sizes):
        def load(path):
            size = random.choice(sizes)
            image = tf.image.resize(tf.io.decode_png(tf.io.read_file(path)), [size, size])
            return jitter(image)

        return load


    loader = make_loader([32, 48, 64])
"""


def test_what_a_module_level_factory_result_returns_runs_in_dataset_map(tmp_path: Path) -> None:
    pipeline = """
        import tensorflow as tf

        from pipeline.loaders import loader

        paths = tf.data.Dataset.list_files("*.png")
        images = paths.map(loader).batch(8)
    """
    files = {"pipeline/__init__.py": "", "pipeline/loaders.py": LOADERS, "train.py": pipeline}
    found = _check(tmp_path, files, ("TFR101", "TFR106"))
    assert found == [("pipeline/loaders.py", 7, "TFR101"), ("pipeline/loaders.py", 14, "TFR106")]


def test_a_factory_result_nobody_hands_to_a_tracer_stays_eager(tmp_path: Path) -> None:
    pipeline = """
        from pipeline.loaders import loader

        images = [loader(p) for p in ["a.png", "b.png"]]
    """
    files = {"pipeline/__init__.py": "", "pipeline/loaders.py": LOADERS, "train.py": pipeline}
    assert _check(tmp_path, files, ("TFR101", "TFR106")) == []


# -- `train_step` that Keras's fit cannot be calling ---------------------------------

EPOCH_MODEL = """
    import numpy as np
    import tensorflow as tf


    class Embedder(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(4)

        def call(self, x):
            return self.dense(x)

        def batches(self, size):
            while True:
                rows = np.random.permutation(100)
                end = min(len(rows), size)
                yield rows[:end]

        def train_step({params}):
            for _ in range(10):
                x = tf.cast(next(self.batches(size))[:, None], tf.float32)
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(self.call(x))
                grads = tape.gradient(loss, self.trainable_weights)
                optimizer.apply_gradients(zip(grads, self.trainable_weights))
            return loss
"""


def test_a_train_step_keras_cannot_call_is_an_eager_loop():
    source = EPOCH_MODEL.format(params="self, optimizer, size")
    found = {f.code: f for f in check_source(_d(source))}
    # The tape in the loop is TFR303's; the generator it draws from stays
    # eager (no TFR102 on `np.random`, no TFR104 on `min`).
    assert sorted(found) == ["TFR303", "TFR304"]
    # `self.call` reaches only a Dense: said, with nothing to fix.
    assert "nothing changes today" in found["TFR304"].message
    assert not (found["TFR304"].fix and found["TFR304"].fix.edits)


def test_a_train_step_keras_can_call_is_still_traced():
    source = EPOCH_MODEL.format(params="self, data, optimizer=None, size=8")
    codes = {f.code for f in check_source(_d(source))}
    assert "TFR303" not in codes
    assert "TFR102" in codes


# -- what reaches a line: a rebound parameter, an if/else binding on every branch ----


def test_a_helper_that_rebinds_its_parameter_returns_a_tensor():
    source = """
        import tensorflow as tf

        def resize(x, scale=2):
            x = tf.image.resize(x, [8 * scale, 8 * scale])
            return x

        @tf.function
        def head(f, b):
            g = resize(f, scale=1)
            dims = g.get_shape().as_list()
            return tf.reshape(b, [dims[0], -1])
    """
    [finding] = [f for f in check_source(_d(source)) if f.code == "TFR107"]
    assert finding.start.line == 11
    assert finding.fix is not None


def test_a_name_bound_on_every_branch_of_an_if_else_holds_only_the_branches():
    source = """
        import tensorflow as tf

        def resize(x, to_shape=None):
            if to_shape is None:
                x = tf.image.resize(x, [8, 8])
            else:
                x = tf.image.resize(x, to_shape)
            return x

        @tf.function
        def head(f, b):
            g = resize(f)
            dims = g.get_shape().as_list()
            return tf.reshape(b, [dims[0], -1])
    """
    [finding] = [f for f in check_source(_d(source)) if f.code == "TFR107"]
    assert finding.start.line == 14


def test_a_name_bound_on_one_branch_only_keeps_the_parameter():
    source = """
        import tensorflow as tf

        def maybe_resize(x, to_shape=None):
            if to_shape is not None:
                x = tf.image.resize(x, to_shape)
            return x

        @tf.function
        def head(f, b):
            g = maybe_resize(f)
            dims = g.get_shape().as_list()
            return tf.reshape(b, [dims[0], -1])
    """
    found = [f for f in check_source(_d(source)) if f.code == "TFR107"]
    # `g` may be `f` itself: a likely tensor, so the fix is unsafe (not applied by default).
    assert all(f.fix is None or not f.fix.applicability.name == "SAFE" for f in found)


# -- what a tape differentiates: terms kept in names and containers ------------------

PERCEPTUAL = """
    import tensorflow as tf


    def make_feature_loss(weight):
        extractor = tf.keras.Sequential([tf.keras.layers.Dense(3)])

        @tf.function
        def feature_loss(target, output):
            return weight * tf.reduce_mean(tf.abs(extractor(target) - extractor(output)))

        return feature_loss
"""


# A decorated step whose tape computes `total` from `out` by `{terms}`.
FEATURE_STEP = """
    import tensorflow as tf

    from losses import make_feature_loss


    def main(net, optimizer, batches):
        feature_fn = make_feature_loss(0.1)

        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                out = net(x, training=True)
{terms}
            grads = tape.gradient(total, net.trainable_variables)
            optimizer.apply_gradients(zip(grads, net.trainable_variables))

        for x, y in batches:
            step(x, y)
"""

TERMS = {
    "kept_in_a_dict": """
                terms = {}
                terms["l1"] = tf.reduce_mean(tf.abs(y - out))
                terms["feature"] = 2.0 * feature_fn(y, out)
                total = tf.add_n(list(terms.values()))""",
    "scaled_by_a_mixed_precision_optimizer": """
                loss = feature_fn(y, out)
                total = optimizer.get_scaled_loss(loss)""",
    "averaged_for_a_distribution_strategy": """
                per_example = feature_fn(y, out)
                total = tf.nn.compute_average_loss(per_example, global_batch_size=64)""",
    "kept_in_a_name_added_later": """
                perceptual = feature_fn(y, out)
                total = perceptual
                total += tf.reduce_mean(tf.abs(y - out))""",
}


@pytest.mark.parametrize("terms", sorted(TERMS))
def test_a_decorated_loss_a_factory_returns_is_found_through_the_tapes_terms(
    tmp_path: Path, terms: str
) -> None:
    train = FEATURE_STEP.replace("{terms}", TERMS[terms].strip("\n"))
    found = _check(tmp_path, {"losses.py": PERCEPTUAL, "train.py": train}, ("TFR301",))
    assert found == [("losses.py", 7, "TFR301")]


def test_a_call_whose_output_is_only_reduced_is_no_loss_term() -> None:
    source = """
        import tensorflow as tf

        from layers import make_encoder


        def main(w, optimizer, x, y):
            encode = make_encoder(4)
            with tf.GradientTape() as tape:
                h = encode(x, y)
                total = tf.reduce_sum(h)
            optimizer.apply_gradients(zip(tape.gradient(total, [w]), [w]))
    """
    assert build_index(_d(source), "train.py", "train").tape_losses == []


def test_terms_summed_from_a_list_are_differentiated() -> None:
    source = """
        import tensorflow as tf

        from losses import make_feature_loss


        def main(w, optimizer, x, y):
            feature_fn = make_feature_loss(0.1)
            with tf.GradientTape() as tape:
                total = tf.reduce_sum([feature_fn(y, x * w), tf.reduce_mean(w)])
            optimizer.apply_gradients(zip(tape.gradient(total, [w]), [w]))
    """
    [loss] = build_index(_d(source), "train.py", "train").tape_losses
    assert loss.callee == "losses.make_feature_loss()"


# -- code that runs only eagerly under a traced function ------------------------------


def test_a_branch_only_eager_execution_takes_is_no_traced_code():
    source = """
        import tensorflow as tf

        @tf.function
        def step(x):
            if tf.executing_eagerly():
                print(x.numpy())
                if tf.reduce_sum(x) > 0:
                    x = x + 1
            if not tf.executing_eagerly():
                x = x * 2
            else:
                print(x.numpy())
            if tf.executing_eagerly() and tf.reduce_sum(x) > 0:
                print(x.numpy())
            return x
    """
    assert check_source(_d(source)) == []


def test_the_traced_side_of_an_eager_test_is_still_checked():
    source = """
        import tensorflow as tf

        @tf.function
        def step(x):
            if not tf.executing_eagerly():
                print(x.numpy())
            return x
    """
    codes = sorted(f.code for f in check_source(_d(source)))
    assert codes == ["TFR103", "TFR105"]


# -- TFR109: `and`/`or`/`not` testing a tensor -----------------------------------------


def test_operands_not_known_to_be_boolean_are_reported_without_a_fix():
    source = """
        import tensorflow as tf

        @tf.function
        def first_nonzero(x):
            count = tf.reduce_sum(x)
            return count or tf.constant(1.0)
    """
    [finding] = [f for f in check_source(_d(source)) if f.code == "TFR109"]
    assert finding.fix is None
    assert "not known to be a boolean tensor" in finding.message


def test_a_right_operand_that_may_fail_stays_lazy():
    source = """
        import tensorflow as tf

        @tf.function
        def has_head(x):
            return tf.size(x) > 0 and x[0] > 0.5
    """
    # `x` is a likely tensor (a parameter): the fix is unsafe.
    assert fix_source(_d(source), select=["TFR109"]) == _d(source)
    fixed = fix_source(_d(source), select=["TFR109"], unsafe_fixes=True)
    assert "tf.cond(tf.size(x) > 0, lambda: x[0] > 0.5, lambda: False)" in fixed


# -- TFR307: `compile(run_eagerly=True)` ---------------------------------------------


def test_run_eagerly_is_removed_wherever_it_stands_in_compile():
    source = """
        import keras

        model = keras.Sequential([keras.layers.Dense(1)])
        model.compile(run_eagerly=True, optimizer="adam")
        model.compile(optimizer="adam", run_eagerly=True)
        if DEBUG:
            model.compile(optimizer="adam", run_eagerly=True)
    """
    fixed = fix_source(_d(source), select=["TFR307"], unsafe_fixes=True)
    assert fixed.splitlines()[3:5] == [
        'model.compile(optimizer="adam")',
        'model.compile(optimizer="adam")',
    ]
    assert 'model.compile(optimizer="adam", run_eagerly=True)' in fixed  # under an `if`


def test_the_switch_in_a_scripts_main_block_is_removed_and_a_chosen_one_kept():
    source = """
        import tensorflow as tf

        if __name__ == "__main__":
            args = parse_args()
            tf.config.run_functions_eagerly(True)
            if args.debug:
                tf.config.run_functions_eagerly(True)
            train(args)
    """
    fixed = fix_source(_d(source), select=["TFR307"], unsafe_fixes=True)
    assert fixed.splitlines()[3:7] == [
        "    args = parse_args()",
        "    if args.debug:",
        "        tf.config.run_functions_eagerly(True)",
        "    train(args)",
    ]


# -- what a function of another module does: averages, batches -----------------------

# The byte prefilter indexes files that name TensorFlow or Keras (and what
# traced code refers into): a metrics helper of a TensorFlow project.
METRICS = """
    import numpy as np
    import tensorflow as tf


    class Summary:
        def __init__(self, mean, spread):
            self.mean, self.spread = mean, spread

        @staticmethod
        def of(values):
            return Summary(np.mean(values), np.std(values))


    def average(values):
        return sum(values) / len(values)
"""

EVALUATE = """
    import tensorflow as tf

    from metrics import Summary, average


    def evaluate(model, batches):
        losses = []
        for x, y in batches.batch(32):
            losses.append(tf.reduce_mean(tf.square(model(x) - y)))
        return Summary.of(losses), average(losses)
"""


def test_per_batch_values_averaged_by_a_helper_of_another_module(tmp_path: Path) -> None:
    found = _check(tmp_path, {"metrics.py": METRICS, "evaluate.py": EVALUATE}, ("TFR306",))
    # One finding per average: `Summary.of(losses)` and `average(losses)`.
    assert found == [("evaluate.py", 10, "TFR306")] * 2


DATASETS = """
    import tensorflow as tf


    def load(paths, size):
        ds = tf.data.TFRecordDataset(paths).map(tf.io.parse_tensor)
        return ds.batch(size, drop_remainder={drop}).prefetch(2)
"""

TRAIN = """
    import tensorflow as tf

    from src.datasets import load


    def train(step, paths):
        total, steps = 0.0, 0
        for batch in load(paths, 32):
            total += step(batch)
            steps += 1
        return total / steps
"""


def test_batches_of_a_dataset_another_module_makes_with_drop_remainder_are_equal(
    tmp_path: Path,
) -> None:
    files = {
        "src/__init__.py": "",
        "src/datasets.py": DATASETS.format(drop="True"),
        "train.py": TRAIN,
    }
    assert _check(tmp_path, files, ("TFR306",)) == []
    files["src/datasets.py"] = DATASETS.format(drop="False")
    assert _check(tmp_path, files, ("TFR306",)) == [("train.py", 11, "TFR306")]


# -- `training` reaches the layers of a model of another module -----------------------


def test_a_model_holding_a_project_model_of_another_module_may_depend_on_training(
    tmp_path: Path,
) -> None:
    encoder = """
        import tensorflow as tf


        class Encoder(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.norm = tf.keras.layers.BatchNormalization()

            def call(self, x):
                return self.norm(x)
    """
    model = """
        import tensorflow as tf

        from encoder import Encoder


        class Autoencoder(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.encoder = Encoder()

            def call(self, x):
                return self.encoder(x)

            def train_step(self, data):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self(data) - data))
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                return {"loss": loss}
    """
    files = {"encoder.py": encoder, "model.py": model}
    [(path, line, code)] = _check(tmp_path, files, ("TFR304",))
    assert (path, line, code) == ("model.py", 16, "TFR304")


def test_a_parameter_the_function_converts_to_a_tensor_is_no_likely_tensor_before():
    source = """
        import tensorflow as tf

        @tf.function
        def update(values, thresholds):
            spread = thresholds[0] < 0.0 or thresholds[-1] > 1.0
            thresholds = tf.convert_to_tensor(thresholds)
            if tf.reduce_max(thresholds) > 1.0:
                values = values * 2.0
            return values, spread
    """
    found = [(f.code, f.start.line) for f in check_source(_d(source))]
    # The `or` tests a Python list's entries; after the conversion the
    # binding proves a tensor, and the `if` is reported.
    assert found == [("TFR101", 7)]


# -- blind sets 25-26: held objects' `__call__`, watched inputs, per-trace state -------


def test_a_held_layer_that_overrides_call_dunder_runs_in_the_models_trace():
    source = """
        import tensorflow as tf

        class Decoder(tf.keras.layers.Layer):
            def __call__(self, memory):
                rows = memory.shape[0]
                return tf.zeros([rows, 4])

        class Speller(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.decoder = Decoder()

            def call(self, x):
                return self.decoder(x)
    """
    [finding] = [f for f in check_source(_d(source)) if f.code == "TFR107"]
    assert finding.start.line == 6


def test_a_tape_optimizing_a_watched_attribute_trains_no_model():
    source = """
        import tensorflow as tf

        class Search:
            def __init__(self, generator):
                self.generator = generator
                self.z = tf.Variable(tf.zeros([1, 8]))
                self.opt = tf.keras.optimizers.Adam()

            @tf.function
            def step(self, x):
                with tf.GradientTape(watch_accessed_variables=False) as tape:
                    tape.watch(self.z)
                    score = tf.reduce_mean(tf.abs(self.generator(self.z) - x))
                grads = tape.gradient(score, [self.z])
                self.opt.apply_gradients(zip(grads, [self.z]))
                return score
    """
    assert [f for f in check_source(_d(source)) if f.code == "TFR304"] == []


def test_a_function_differentiated_by_a_tape_no_optimizer_follows_is_no_loss(
    tmp_path: Path,
) -> None:
    physics = """
        import tensorflow as tf

        @tf.function
        def pair_energy(r):
            return tf.reduce_sum(1.0 / r**6)
    """
    forces = """
        import tensorflow as tf

        from physics import pair_energy

        @tf.function
        def forces(r):
            with tf.GradientTape() as tape:
                tape.watch(r)
                energy = 2.0 * pair_energy(r)
            return -tape.gradient(energy, r)
    """
    files = {"physics.py": physics, "forces.py": forces}
    assert _check(tmp_path, files, ("TFR301",)) == []


def test_state_a_step_reads_after_calling_the_method_that_sets_it_is_per_trace():
    source = """
        import tensorflow as tf

        class Potential(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.width_net = tf.keras.layers.Dense(1)

            def call(self, x):
                self.width = 1.5 + self.width_net(x)
                return tf.reduce_sum(self.width * x, axis=-1)

            def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                return {"loss": loss, "width": tf.reduce_mean(self.width)}
    """
    assert [f for f in check_source(_d(source)) if f.code == "TFR201"] == []


def test_a_held_metrics_result_is_a_tensor():
    source = """
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self.auc = tf.keras.metrics.AUC()

            @tf.function
            def validate(self, batches, best):
                for x, y in batches:
                    self.auc.update_state(y, x)
                current = self.auc.result()
                if best < current:
                    best = current
                return best
    """
    [finding] = [f for f in check_source(_d(source)) if f.code == "TFR101"]
    assert finding.start.line == 12


def test_a_batch_dimension_handed_to_a_held_objects_method_or_repeating_a_list():
    source = """
        import tensorflow as tf

        class Decoder(tf.keras.layers.Layer):
            def reset_state(self, batch_size):
                return tf.zeros((batch_size, 8))

        class Captioner(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.decoder = Decoder()

            @tf.function
            def train_step(self, data):
                images, captions = data
                state = self.decoder.reset_state(batch_size=captions.shape[0])
                start = tf.expand_dims([1] * captions.shape[0], 1)
                return state, start
    """
    found = {f.start.line: f for f in check_source(_d(source)) if f.code == "TFR107"}
    assert sorted(found) == [15, 16]
    assert "its `batch_size`" in found[15].message
    assert found[16].fix is None and "repeating a Python list" in found[16].message


def test_a_likely_condition_whose_branches_autograph_cannot_merge_is_a_python_flag():
    source = """
        import tensorflow as tf

        class Trainer:
            @tf.function
            def step(self, x, visualise):
                loss = tf.reduce_mean(x)
                if visualise:
                    return loss, x
                return loss, None

            @tf.function
            def checked(self, x):
                loss = tf.reduce_mean(x)
                if loss > 1.0:
                    return loss, x
                return loss, None
    """
    found = [(f.code, f.start.line) for f in check_source(_d(source)) if f.code == "TFR101"]
    # `visualise` only likely a tensor: with a tensor there AutoGraph would
    # fail too, so the working code says it is Python. `loss` is proven.
    assert found == [("TFR101", 14)]


def test_a_list_repeated_by_a_batch_dimension_alone_in_its_file():
    source = """
        import tensorflow as tf

        @tf.function
        def starts(tokens):
            return tf.expand_dims([1] * tokens.shape[0], 1)
    """
    [finding] = [f for f in check_source(_d(source)) if f.code == "TFR107"]
    assert "repeating a Python list" in finding.message


RETURNED_LOSS = """
    import tensorflow as tf


    class Agent:
        def __init__(self, net, optimizer, categorical):
            self.net = net
            self.optimizer = optimizer
            self.categorical = categorical

        @tf.function
        def squared(self, states, targets, weights):
            errors = tf.math.squared_difference(targets, self.net(states))
            return tf.reduce_mean(weights * errors)

        @tf.function
        def absolute(self, states, targets, weights):
            return tf.reduce_mean(weights * tf.abs(targets - self.net(states)))

        def pick_loss(self, batch, weights):
            states, targets = batch
            if self.categorical:
                return self.absolute(states, targets, weights)
            return self.squared(states, targets, weights)

        def step(self, batch, weights):
            with tf.GradientTape() as tape:
                loss = self.pick_loss(batch, weights)
            grads = tape.gradient(loss, self.net.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.net.trainable_variables))
            return loss.numpy()
"""


def test_the_losses_a_differentiated_method_returns_are_differentiated(tmp_path: Path) -> None:
    """`loss = self.pick_loss(...)` in the tape: `pick_loss` returns what
    `self.absolute(...)` or `self.squared(...)` computes, so both decorated
    methods are the losses the tape differentiates (TFR301)."""
    found = _check(tmp_path, {"agent.py": RETURNED_LOSS}, ("TFR301",))
    assert found == [("agent.py", 10, "TFR301"), ("agent.py", 15, "TFR301")]


LOSS_OBJECT = {
    "losses.py": """
    import tensorflow as tf


    class Losses:
        def __init__(self):
            self.mae = tf.keras.losses.MeanAbsoluteError()

        @tf.function
        def reconstruction(self, y_true, y_pred):
            return self.mae(y_true, y_pred)

        @tf.function
        def smoothness(self, flow):
            return tf.reduce_mean(tf.abs(flow[:, 1:] - flow[:, :-1]))

        def total(self, y_true, y_pred, flow):
            rec = self.reconstruction(y_true, y_pred)
            smooth = self.smoothness(flow)
            return rec + 0.1 * smooth, rec
    """,
    "train.py": """
    import tensorflow as tf

    import losses


    @tf.function
    def train_step(model, optimizer, loss_obj, x, y):
        with tf.GradientTape() as tape:
            pred, flow = model(x, training=True)
            loss_values = loss_obj.total(y, pred, flow)
        grads = tape.gradient(loss_values, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


    def train(model, optimizer, batches):
        loss_obj = losses.Losses()
        for x, y in batches:
            train_step(model, optimizer, loss_obj, x, y)
    """,
}


def test_a_loss_method_of_an_object_every_caller_passes_is_differentiated(tmp_path: Path) -> None:
    """`loss_obj.total(...)` in the tape, `loss_obj` a `Losses` at the only
    call site: `Losses.total` runs in the step's trace, and the decorated
    methods whose results its return is made of are the losses (TFR301)."""
    found = _check(tmp_path, LOSS_OBJECT, ("TFR301",))
    assert found == [("losses.py", 8, "TFR301"), ("losses.py", 12, "TFR301")]


def test_an_object_of_another_class_at_one_call_site_resolves_nothing(tmp_path: Path) -> None:
    files = dict(LOSS_OBJECT)
    files["train.py"] = files["train.py"] + (
        "\n\n    def evaluate(model, optimizer, batches):\n"
        "        other = object()\n"
        "        for x, y in batches:\n"
        "            train_step(model, optimizer, other, x, y)\n"
    )
    assert _check(tmp_path, files, ("TFR301",)) == []
