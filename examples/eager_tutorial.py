"""An eager training script written the way many tutorials write one.

It trains a small classifier on generated data and has, on purpose, each
hazard tfrewrite knows about. As written it cannot even train: its loss is
computed after the tape closed ("No gradients provided for any variable").
One command migrates it (the diff is `eager_tutorial.fix.diff`):

    tfrewrite fix --diff --unsafe-fixes examples/eager_tutorial.py

`verify` proves the migration: it replays the loop of `main()` for a few
batches (the short last one included), the original eagerly and the migrated
script traced, from the same initial weights. The step is random (dropout,
input noise), so each side is replayed under four seeds and the loss curves
and final weights are compared by distribution:

    cd examples && tfrewrite verify --unsafe-fixes eager_tutorial.py

The migrated script trains, and `benchmarks/train_step_payoff.py` times its
train step before (eager, op by op) and after (traced): about 10x faster.
The `if` on the gradient norm becomes a `tf.cond` (`global_norm` returns a
scalar), so the step needs no AutoGraph.
`make demo` shows all of it.
"""

import sys

import keras
import numpy as np
import tensorflow as tf

# Left on from a debugging session: every tf.function runs eagerly (TFR307).
tf.config.run_functions_eagerly(True)

LABEL_SMOOTHING = False


def make_dataset(n=2000, seed=0):
    """2000 examples in batches of 512: the last batch holds 464."""
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, 32)).astype("float32")
    labels = features[:, :10].argmax(axis=1).astype("int32")
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(512)


keras.utils.set_random_seed(0)
model = keras.Sequential(
    [
        keras.Input((32,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dropout(0.2),
        keras.layers.Dense(10),
    ]
)
optimizer = keras.optimizers.SGD(learning_rate=0.05)


# Only the loss is compiled (TFR301), and the flag it reads is frozen at its
# first trace (TFR201).
@tf.function
def loss_fn(labels, logits):
    if LABEL_SMOOTHING:
        labels = tf.one_hot(labels, 10) * 0.9 + 0.01
        return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels, logits))
    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    )


# Eager, op by op (TFR302); dropout off while training (TFR304); the loss is
# computed after the tape closed, so its gradients are None (TFR305); NumPy
# noise (TFR102), a Python `if` on a tensor (TFR101) and a print (TFR103)
# that would break or freeze under tracing.
def train_step(x, y):
    x = x + np.random.normal(0.0, 0.01, size=x.shape).astype("float32")
    with tf.GradientTape() as tape:
        logits = model(x)
    loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    if tf.linalg.global_norm(grads) > 0.7:
        grads, _ = tf.clip_by_global_norm(grads, 0.7)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy = tf.reduce_mean(tf.cast(tf.argmax(logits, axis=1, output_type=tf.int32) == y, tf.float32))
    print("batch accuracy:", accuracy)
    return loss, accuracy


def main(epochs=3):
    dataset = make_dataset()
    for epoch in range(epochs):
        accuracies = []
        for x, y in dataset:
            loss, accuracy = train_step(x, y)
            accuracies.append(float(accuracy))
        # Every batch weighs the same, the short last one too (TFR306).
        print(f"epoch {epoch}: loss {float(loss):.4f}, accuracy {np.mean(accuracies):.4f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
