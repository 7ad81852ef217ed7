import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
inputs = tf.keras.Input((3,))
model = tf.keras.Model(inputs, [tf.keras.layers.Dense(1)(inputs), tf.keras.layers.Dense(2)(inputs)])
optimizer = tf.keras.optimizers.SGD(0.1)
x = np.random.randn(32, 3).astype(np.float32)
targets = [np.random.randn(32, 1).astype(np.float32), np.random.randn(32, 2).astype(np.float32)]

for epoch in range(2):
    for i in range(4):
        xb = x[i * 8:(i + 1) * 8]
        with tf.GradientTape() as tape:
            outputs = model(xb, training=True)
            losses = []
            for out, target in zip(outputs, targets):
                losses.append(tf.reduce_mean((out - target[i * 8:(i + 1) * 8]) ** 2))
            loss = tf.add_n(losses) + 1e-3 * tf.add_n([tf.nn.l2_loss(w) for w in model.trainable_variables])
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


def weights():
    return [tf.identity(w) for w in model.weights]


PROBES = [("weights", ())]
