"""Mutation tests: for every kind of rewrite tfrewrite makes, a correct
rewrite verifies and a hand-broken one is reported.

Each case is (original, correct rewrite, broken rewrite), written small. They
go through the same path as `tfrewrite verify`: the changed functions and
training loops are found (`pair_targets`), then each target is verified.
"""

from __future__ import annotations

import pytest
from tests.tf.verify_pairs import failures, verify_pair

from tfrewrite.verify.checks import Options

pytestmark = pytest.mark.tensorflow

OPTIONS = Options(samples=1000, search=48)


# --- functions ----------------------------------------------------------------

COND = """
import tensorflow as tf

def clipped_loss(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.3:
        loss = error * 2.0
    else:
        loss = tf.square(error)
    return loss
"""
COND_OK = """
import tensorflow as tf

def clipped_loss(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    loss = tf.cond(error > 0.3, lambda: error * 2.0, lambda: tf.square(error))
    return loss
"""

NOISE = """
import numpy as np
import tensorflow as tf

def augment(y_true, y_pred):
    noise = np.random.normal(0.0, 0.1, size=y_pred.shape).astype("float32")
    return y_pred + noise
"""
NOISE_OK = """
import numpy as np
import tensorflow as tf

def augment(y_true, y_pred):
    noise = tf.random.normal(tf.shape(y_pred), 0.0, 0.1)
    return y_pred + noise
"""

DIE = """
import random
import tensorflow as tf

def scaled(y_true, y_pred):
    return y_pred * float(random.randint(1, 3))
"""
DIE_OK = """
import random
import tensorflow as tf

def scaled(y_true, y_pred):
    return y_pred * tf.cast(tf.random.uniform([], 1, 4, dtype=tf.int32), tf.float32)
"""

SEEDED = """
import numpy as np
import tensorflow as tf

def jitter(y_true, y_pred):
    rng = np.random.RandomState(0)
    return y_pred + rng.normal(0.0, 0.1, size=y_pred.shape).astype("float32")
"""

PRINT = """
import sys
import tensorflow as tf

def logged_loss(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred))
    print("loss", loss)
    return loss
"""
# `print` writes to standard output, `tf.print` to standard error by default.
PRINT_OK = PRINT.replace('print("loss", loss)', 'tf.print("loss", loss, output_stream=sys.stdout)')

PRINT_TENSOR = """
import sys
import tensorflow as tf

def shown(y_true, y_pred):
    print(y_pred)
    return tf.reduce_sum(y_pred)
"""

PRINT_SHAPE = """
import sys
import tensorflow as tf

@tf.function(input_signature=[tf.TensorSpec([None, 4]), tf.TensorSpec([None, 4])])
def batch_loss(y_true, y_pred):
    print("batch of", y_pred.shape[0])
    return tf.reduce_mean(y_true - y_pred)
"""

NUMPY_MATH = """
import numpy as np
import tensorflow as tf

def log_loss(y_true, y_pred):
    return np.mean(np.log(y_pred + 1e-7) * y_true)
"""
NUMPY_MATH_OK = """
import numpy as np
import tensorflow as tf

def log_loss(y_true, y_pred):
    return tf.reduce_mean(tf.math.log(y_pred + 1e-7) * y_true)
"""

NUMPY_CALL = """
import tensorflow as tf

def weighted_loss(y_true, y_pred):
    weight = tf.reduce_mean(y_pred).numpy()
    return weight * tf.reduce_mean(tf.square(y_true - y_pred))
"""
NUMPY_CALL_OK = NUMPY_CALL.replace(
    "tf.reduce_mean(y_pred).numpy()", "tf.stop_gradient(tf.reduce_mean(y_pred))"
)

HUBER = """
import tensorflow as tf

def huber_like(y_true, y_pred):
    error = tf.reduce_mean(tf.square(y_true - y_pred))
    if error > 1.0:
        loss = error * 2.0 - 1.0
    else:
        loss = tf.square(error)
    return loss
"""
HUBER_OK = """
import tensorflow as tf

def huber_like(y_true, y_pred):
    error = tf.reduce_mean(tf.square(y_true - y_pred))
    loss = tf.cond(error > 1.0, lambda: error * 2.0 - 1.0, lambda: tf.square(error))
    return loss
"""

# Elementwise: predictions above 1 are capped. Draws in [0, 1] never exceed it.
CAPPED = """
import numpy as np
import tensorflow as tf

def capped(y_true, y_pred):
    return np.where(y_pred > 1.0, 1.0, y_pred)
"""
CAPPED_OK = CAPPED.replace("np.where(y_pred > 1.0", "tf.where(y_pred > 1.0")

NAN_CLEANED = """
import numpy as np
import tensorflow as tf

def cleaned(y_true, y_pred):
    return np.where(np.isnan(y_pred), 0.0, y_pred)
"""
NAN_CLEANED_OK = NAN_CLEANED.replace(
    "np.where(np.isnan(y_pred), 0.0, y_pred)", "tf.where(tf.math.is_nan(y_pred), 0.0, y_pred)"
)

# The NaN branch runs only on an input holding a NaN.
NAN_GUARD = """
import tensorflow as tf

def guarded_loss(y_true, y_pred):
    if tf.reduce_any(tf.math.is_nan(y_pred)):
        y_pred = tf.where(tf.math.is_nan(y_pred), 0.0, y_pred)
    return tf.reduce_mean(tf.square(y_true - y_pred))
"""
NAN_GUARD_OK = """
import tensorflow as tf

def guarded_loss(y_true, y_pred):
    y_pred = tf.cond(
        tf.reduce_any(tf.math.is_nan(y_pred)),
        lambda: tf.where(tf.math.is_nan(y_pred), 0.0, y_pred),
        lambda: y_pred,
    )
    return tf.reduce_mean(tf.square(y_true - y_pred))
"""

MEAN_ERROR = """
import numpy as np
import tensorflow as tf

def mean_error(y_true, y_pred):
    return np.mean(np.abs(y_true - y_pred))
"""
MEAN_ERROR_OK = MEAN_ERROR.replace(
    "np.mean(np.abs(y_true - y_pred))", "tf.reduce_mean(tf.abs(y_true - y_pred))"
)

CONFIDENT = """
import numpy as np
import tensorflow as tf

def confident(y_true, y_pred):
    return np.count_nonzero(y_pred > 0.5, axis=-1).astype("int32")
"""
CONFIDENT_OK = CONFIDENT.replace(
    'np.count_nonzero(y_pred > 0.5, axis=-1).astype("int32")',
    "tf.math.count_nonzero(y_pred > 0.5, axis=-1, dtype=tf.int32)",
)

REGULARISED = """
import numpy as np
import tensorflow as tf

def regularised_loss(y_true, y_pred):
    mse = np.mean(np.square(y_true - y_pred))
    penalty = 0.01 * np.sum(np.abs(y_pred))
    return mse + penalty
"""
REGULARISED_OK = REGULARISED.replace(
    "np.mean(np.square(y_true - y_pred))", "tf.reduce_mean(tf.square(y_true - y_pred))"
).replace("np.sum(np.abs(y_pred))", "tf.reduce_sum(tf.abs(y_pred))")

JITTER = """
import tensorflow as tf

def jittered(y_true, y_pred):
    if tf.reduce_mean(y_pred) > 0.5:
        noise = tf.random.stateless_normal(tf.shape(y_pred), seed=[1, 2], stddev=0.1)
    else:
        noise = tf.zeros_like(y_pred)
    return y_pred + noise
"""
JITTER_OK = """
import tensorflow as tf

def jittered(y_true, y_pred):
    noise = tf.cond(
        tf.reduce_mean(y_pred) > 0.5,
        lambda: tf.random.stateless_normal(tf.shape(y_pred), seed=[1, 2], stddev=0.1),
        lambda: tf.zeros_like(y_pred),
    )
    return y_pred + noise
"""

EMPTY_BATCH = """
import tensorflow as tf

def batch_error(y_true, y_pred):
    if tf.size(y_pred) == 0:
        return tf.constant(0.0)
    return tf.reduce_mean(tf.abs(y_true - y_pred))
"""
EMPTY_BATCH_OK = """
import tensorflow as tf

def batch_error(y_true, y_pred):
    return tf.cond(
        tf.size(y_pred) == 0,
        lambda: tf.constant(0.0),
        lambda: tf.reduce_mean(tf.abs(y_true - y_pred)),
    )
"""

# A scalar input (from the signature): the step decays at exactly 100.
SCHEDULE = """
import tensorflow as tf

@tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
def learning_rate(step):
    if step < 100.0:
        rate = tf.constant(0.001)
    else:
        rate = tf.constant(0.0001)
    return rate
"""
SCHEDULE_OK = """
import tensorflow as tf

@tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
def learning_rate(step):
    rate = tf.cond(step < 100.0, lambda: tf.constant(0.001), lambda: tf.constant(0.0001))
    return rate
"""

FUNCTION_CASES = [
    # (rule, original, correct rewrite, broken rewrite, the check that must fail)
    (
        "TFR101 swapped branches",
        COND,
        COND_OK,
        COND_OK.replace(
            "lambda: error * 2.0, lambda: tf.square(error)",
            "lambda: tf.square(error), lambda: error * 2.0",
        ),
        "rewrite traced",
    ),
    (
        "TFR101 wrong constant",
        COND,
        COND_OK,
        COND_OK.replace("error > 0.3", "error > 0.4"),
        "rewrite traced",
    ),
    (
        "TFR102 changed scale",
        NOISE,
        NOISE_OK,
        NOISE_OK.replace("0.0, 0.1)", "0.0, 0.12)"),
        "random distribution",
    ),
    (
        "TFR102 frozen random",
        NOISE,
        NOISE_OK,
        NOISE_OK.replace(
            "tf.random.normal(tf.shape(y_pred), 0.0, 0.1)",
            'tf.constant(np.random.normal(0.0, 0.1, size=y_pred.shape).astype("float32"))',
        ),
        "fresh random samples",
    ),
    (
        "TFR106 off-by-one bound",
        DIE,
        DIE_OK,
        DIE_OK.replace("[], 1, 4,", "[], 1, 3,"),
        "random distribution",
    ),
    (
        "TFR102 seeded original, unseeded rewrite",
        SEEDED,
        SEEDED,
        SEEDED.replace(
            'rng.normal(0.0, 0.1, size=y_pred.shape).astype("float32")',
            "tf.random.normal(tf.shape(y_pred), 0.0, 0.1)",
        ),
        "rewrite traced",
    ),
    (
        "TFR103 dropped print",
        PRINT,
        PRINT_OK,
        PRINT.replace('    print("loss", loss)\n', ""),
        "prints every call",
    ),
    (
        "TFR103 print moved to standard error",
        PRINT,
        PRINT_OK,
        PRINT.replace('print("loss", loss)', 'tf.print("loss", loss)'),
        "prints every call",
    ),
    (
        "TFR103 abbreviated tensor",
        PRINT_TENSOR,
        PRINT_TENSOR.replace(
            "print(y_pred)", "tf.print(y_pred, summarize=-1, output_stream=sys.stdout)"
        ),
        PRINT_TENSOR.replace("print(y_pred)", "tf.print(y_pred, output_stream=sys.stdout)"),
        "prints every call",
    ),
    (
        "TFR103 static shape printed as None",
        PRINT_SHAPE,
        PRINT_SHAPE.replace(
            'print("batch of", y_pred.shape[0])',
            'tf.print("batch of", tf.shape(y_pred)[0], output_stream=sys.stdout)',
        ),
        PRINT_SHAPE.replace(
            'print("batch of", y_pred.shape[0])',
            'tf.print("batch of", y_pred.shape[0], output_stream=sys.stdout)',
        ),
        "prints every call",
    ),
    (
        "TFR104 wrong constant",
        NUMPY_MATH,
        NUMPY_MATH_OK,
        NUMPY_MATH_OK.replace("1e-7", "1e-3"),
        "rewrite traced",
    ),
    (
        "TFR105 gradient stop lost",
        NUMPY_CALL,
        NUMPY_CALL_OK,
        NUMPY_CALL.replace("tf.reduce_mean(y_pred).numpy()", "tf.reduce_mean(y_pred)"),
        "gradients",
    ),
    # Bugs that only inputs placed on a condition's boundaries reveal (see
    # `verify.boundaries`): between a moved threshold's two values, at a
    # constant, NaN, an empty batch.
    (
        "TFR101 threshold moved from 1.0 to 1.2",
        HUBER,
        HUBER_OK,
        HUBER_OK.replace("error > 1.0", "error > 1.2"),
        "rewrite traced",
    ),
    (
        "TFR101 < turned into <= on a scalar input",
        SCHEDULE,
        SCHEDULE_OK,
        SCHEDULE_OK.replace("step < 100.0", "step <= 100.0"),
        "rewrite traced",
    ),
    (
        "TFR104 tf.where threshold moved from 1.0 to 1.2",
        CAPPED,
        CAPPED_OK,
        CAPPED_OK.replace("y_pred > 1.0", "y_pred > 1.2"),
        "rewrite traced",
    ),
    (
        "TFR104 NaN test turned into an infinity test",
        NAN_CLEANED,
        NAN_CLEANED_OK,
        NAN_CLEANED_OK.replace("tf.math.is_nan", "tf.math.is_inf"),
        "rewrite traced",
    ),
    (
        "TFR101 NaN guard replaced by a wrong value",
        NAN_GUARD,
        NAN_GUARD_OK,
        NAN_GUARD_OK.replace("is_nan(y_pred), 0.0, y_pred)", "is_nan(y_pred), 1.0, y_pred)"),
        "rewrite traced",
    ),
    (
        "TFR101 emptiness tested on the wrong axis",
        EMPTY_BATCH,
        EMPTY_BATCH_OK,
        EMPTY_BATCH_OK.replace("tf.size(y_pred) == 0", "tf.shape(y_pred)[1] == 0"),
        "rewrite traced",
    ),
    (
        "TFR101 seed changed in a branch",
        JITTER,
        JITTER_OK,
        JITTER_OK.replace("seed=[1, 2]", "seed=[1, 3]"),
        "rewrite traced",
    ),
    (
        "TFR104 float32 result turned float64",
        MEAN_ERROR,
        MEAN_ERROR_OK,
        MEAN_ERROR_OK.replace(
            "tf.abs(y_true - y_pred)", "tf.abs(tf.cast(y_true - y_pred, tf.float64))"
        ),
        "rewrite traced",
    ),
    (
        "TFR104 int32 result turned int64",
        CONFIDENT,
        CONFIDENT_OK,
        CONFIDENT_OK.replace(", dtype=tf.int32)", ")"),
        "rewrite traced",
    ),
    (
        "TFR104 dropped term",
        REGULARISED,
        REGULARISED_OK,
        REGULARISED_OK.replace("    return mse + penalty", "    return mse"),
        "rewrite traced",
    ),
]


@pytest.mark.parametrize(
    ("case", "original", "correct", "broken", "check"),
    FUNCTION_CASES,
    ids=[c[0] for c in FUNCTION_CASES],
)
def test_function_rewrites(case: str, original: str, correct: str, broken: str, check: str) -> None:
    if correct != original:
        good = verify_pair(original, correct, OPTIONS)
        assert all(r["verdict"] == "equivalent" for r in good), failures(good) or good
    bad = verify_pair(original, broken, OPTIONS)
    assert any(r["verdict"] == "mismatch" for r in bad), bad
    failed = {c["name"] for r in bad for c in r["checks"] if not c["ok"]}
    assert check in failed, failures(bad)


# --- training loops -------------------------------------------------------------

PRELUDE = """
import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
features = rng.normal(size=(40, 3)).astype("float32")
targets = features @ np.array([[1.0], [-2.0], [0.5]], dtype="float32")
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(16)

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(learning_rate=0.05)
"""

MOVED_DECORATOR = (
    PRELUDE
    + """

@tf.function(jit_compile=True)
def loss_fn(y, prediction):
    return tf.reduce_mean(tf.square(prediction - y))


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    tf.print("loss", loss)
    return loss


for epoch in range(2):
    for x, y in dataset:
        loss = train_step(x, y)
"""
)
MOVED_DECORATOR_OK = MOVED_DECORATOR.replace(
    "@tf.function(jit_compile=True)\ndef loss_fn", "def loss_fn"
).replace("def train_step", "@tf.function\ndef train_step")

DECORATED_STEP = (
    PRELUDE
    + """

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


if __name__ == "__main__":
    history = []
    for x, y in dataset:
        loss = train_step(x, y)
        history.append(float(loss))
"""
)
DECORATED_STEP_OK = DECORATED_STEP.replace(
    "def train_step", "@tf.function(reduce_retracing=True)\ndef train_step"
)

INLINE = (
    PRELUDE
    + """
for epoch in range(2):
    for x, y in dataset:
        with tf.GradientTape() as tape:
            prediction = model(x, training=True)
            loss = tf.reduce_mean(tf.square(prediction - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""
)
INLINE_STEP = """

@tf.function(reduce_retracing=True)
def train_step(x, y):
    with tf.GradientTape() as tape:
        prediction = model(x, training=True)
        loss = tf.reduce_mean(tf.square(prediction - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(2):
    for x, y in dataset:
        loss = train_step(x, y)
"""
INLINE_OK = PRELUDE + INLINE_STEP

LOSS_AFTER_TAPE = (
    PRELUDE
    + """
for x, y in dataset:
    with tf.GradientTape() as tape:
        prediction = model(x, training=True)
    error = prediction - y
    loss = tf.reduce_mean(tf.square(error))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""
)
LOSS_IN_TAPE = LOSS_AFTER_TAPE.replace(
    "        prediction = model(x, training=True)\n    error = prediction - y\n"
    "    loss = tf.reduce_mean(tf.square(error))\n",
    "        prediction = model(x, training=True)\n        error = prediction - y\n"
    "        loss = tf.reduce_mean(tf.square(error))\n",
)

LOOP_CASES = [
    (
        "TFR301 decorator moved with jit_compile onto a printing step",
        MOVED_DECORATOR,
        MOVED_DECORATOR_OK,
        MOVED_DECORATOR_OK.replace(
            "@tf.function\ndef train_step", "@tf.function(jit_compile=True)\ndef train_step"
        ),
        "train loop: rewrite runs",
    ),
    (
        "TFR302 static batch size under reduce_retracing",
        DECORATED_STEP,
        DECORATED_STEP_OK,
        DECORATED_STEP_OK.replace("- y))\n    grads", "- y)) * x.shape[0] / 16\n    grads"),
        "train loop: rewrite runs",
    ),
    (
        "TFR302 wrong constant",
        DECORATED_STEP,
        DECORATED_STEP_OK,
        DECORATED_STEP_OK.replace(
            "tf.square(model(x, training=True) - y)",
            "tf.square(model(x, training=True) - y) * 1.01",
        ),
        "train loop: values per step",
    ),
    (
        "TFR303 a statement moved out of the tape",
        INLINE,
        INLINE_OK,
        PRELUDE
        + INLINE_STEP.replace(
            "\n        loss = tf.reduce_mean(tf.square(prediction - y))\n    grads",
            "\n    loss = tf.reduce_mean(tf.square(prediction - y))\n    grads",
        ),
        "train loop: rewrite runs",
    ),
    (
        "TFR305 a statement left out of the tape",
        LOSS_AFTER_TAPE,
        LOSS_IN_TAPE,
        LOSS_IN_TAPE.replace(
            "        loss = tf.reduce_mean(tf.square(error))\n",
            "    loss = tf.reduce_mean(tf.square(error))\n",
        ),
        "train loop: rewrite runs",
    ),
]


@pytest.mark.parametrize(
    ("case", "original", "correct", "broken", "check"), LOOP_CASES, ids=[c[0] for c in LOOP_CASES]
)
def test_training_loop_rewrites(
    case: str, original: str, correct: str, broken: str, check: str
) -> None:
    assert broken != correct
    good = verify_pair(original, correct, OPTIONS)
    assert all(r["verdict"] == "equivalent" for r in good), failures(good) or good
    loops = [r for r in good if r["function"].startswith("loop at line")]
    assert loops and all("batch sizes 16, 16, 8" in r["inputs"][0] for r in loops), loops
    bad = verify_pair(original, broken, OPTIONS)
    assert any(r["verdict"] == "mismatch" for r in bad), bad
    failed = {c["name"] for r in bad for c in r["checks"] if not c["ok"]}
    assert check in failed, failures(bad)
