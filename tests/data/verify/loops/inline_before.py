"""A training loop written inline at module level (TFR303 extracts its step)."""

import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
features = rng.normal(size=(90, 3)).astype("float32")
targets = features @ np.array([[1.0], [-2.0], [0.5]], dtype="float32")
batches = tf.data.Dataset.from_tensor_slices((features, targets)).batch(16)

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(learning_rate=0.05)

history = []
for epoch in range(2):
    for x, y in batches:
        with tf.GradientTape() as tape:
            prediction = model(x, training=True)
            loss = tf.reduce_mean(tf.square(prediction - y))
        history.append(float(loss))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
print(history[-1])
