"""A small custom training loop with the mistakes tfrewrite's TFR3xx rules find.

Run it (a few seconds on CPU), then see what tfrewrite says and does:

    tfrewrite check examples/custom_training_loop.py
    tfrewrite fix --diff --unsafe-fixes examples/custom_training_loop.py
"""

import keras
import numpy as np
import tensorflow as tf

# Debugging switch, left on: every tf.function runs eagerly (TFR307).
tf.config.run_functions_eagerly(True)

BATCH_SIZE = 64


def make_dataset(n=1000, seed=0):
    """Generated data: 1000 examples, so the last batch of 64 holds only 40."""
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, 20)).astype("float32")
    labels = (features[:, :4].sum(axis=1) > 0).astype("int32")
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(BATCH_SIZE)


def build_model():
    keras.utils.set_random_seed(0)
    return keras.Sequential(
        [
            keras.Input((20,)),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dropout(0.3),
            keras.layers.Dense(2),
        ]
    )


# The decorator compiles only the loss (TFR301); it belongs on the step.
@tf.function
def loss_fn(labels, logits):
    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    )


# An eager train step called once per batch (TFR302); the model runs without
# training=True, so dropout is off while training (TFR304).
def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        logits = model(x)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss, logits


def main(epochs=3):
    model = build_model()
    optimizer = keras.optimizers.Adam(learning_rate=0.01)
    dataset = make_dataset()
    for epoch in range(epochs):
        batch_losses = []
        batch_accs = []
        for x, y in dataset:
            loss, logits = train_step(model, optimizer, x, y)
            correct = tf.cast(tf.argmax(logits, axis=1, output_type=tf.int32) == y, tf.float32)
            batch_losses.append(float(loss))
            batch_accs.append(float(tf.reduce_mean(correct)))
        # Every batch weighs the same, the short last one included (TFR306).
        print(f"epoch {epoch}: loss {np.mean(batch_losses):.4f}, accuracy {np.mean(batch_accs):.4f}")


if __name__ == "__main__":
    main()
