import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
x = np.random.randn(30, 3).astype(np.float32)
y = np.random.randn(30, 1).astype(np.float32)


def train_step(xb, yb):
    with tf.GradientTape() as tape:
        pred = model(xb, training=True)
        weight = tf.ones([xb.shape[0], 1]) / xb.shape[0]
        loss = tf.reduce_sum(weight * (pred - yb) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(2):
    for i in range(0, 30, 8):
        train_step(x[i:i + 8], y[i:i + 8])


def weights():
    return [tf.identity(w) for w in model.weights]


PROBES = [("weights", ())]
