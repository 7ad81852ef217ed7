"""The common tutorial shape: module-level data, model and optimizer, an
eager train step called from a loop under the main guard."""

import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x_train = rng.normal(size=(100, 4)).astype("float32")
y_train = (x_train.sum(axis=1, keepdims=True) > 0).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(learning_rate=0.1)
loss_object = keras.losses.BinaryCrossentropy(from_logits=True)


def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_object(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


if __name__ == "__main__":
    for epoch in range(3):
        for x, y in dataset:
            loss = train_step(x, y)
        print("epoch", epoch, float(loss))
