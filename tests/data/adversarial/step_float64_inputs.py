import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(0.01)
x = np.random.randn(30, 3)
y = np.random.randn(30, 1)


@tf.function
def loss_fn(y_true, y_pred):
    return tf.reduce_mean(tf.square(tf.cast(y_true, tf.float32) - y_pred))


def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(2):
    for i in range(0, 30, 8):
        train_step(x[i:i + 8], y[i:i + 8])


def weights():
    return [tf.identity(w) for w in model.weights]


PROBES = [("weights", ())]
