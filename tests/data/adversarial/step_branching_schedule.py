import numpy as np
import tensorflow as tf


class Warmup(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, peak, warmup_steps):
        self.peak = peak
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        if step < self.warmup_steps:
            return self.peak * tf.cast(step + 1, tf.float32) / self.warmup_steps
        return tf.constant(self.peak)


tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(learning_rate=Warmup(0.1, 3))
x = np.random.randn(16, 3).astype(np.float32)
y = np.random.randn(16, 1).astype(np.float32)


def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(xb, training=True) - yb) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(2):
    for i in range(0, 16, 8):
        train_step(x[i:i + 8], y[i:i + 8])


def weights():
    return [tf.identity(w) for w in model.weights]


PROBES = [("weights", ())]
