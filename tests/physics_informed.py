"""A physics-informed net in the shape research code gives it: a
`keras.Model` subclass keeping its variables in a list (`self.params`),
a loss method with its own `@tf.function` that a helper differentiates
with a tape and hands the gradients back, and a decorated descent step
applying them, driven over slices of the collocation points. Shared by
the source and TensorFlow tests."""

PINN = """
import numpy as np
import tensorflow as tf


class PINN(tf.keras.Model):
    def __init__(self, points, values):
        super().__init__()
        self.points = points
        self.values = values
        self.dnn = tf.keras.Sequential(
            [tf.keras.Input((1,)), tf.keras.layers.Dense(8, "tanh"), tf.keras.layers.Dense(1)]
        )
        self.params = self.dnn.trainable_variables
        self.optimizer = tf.keras.optimizers.SGD(0.01)

    def residual(self, x):
        with tf.GradientTape() as tp:
            tp.watch(x)
            u = self.dnn(x)
        u_x = tp.gradient(u, x)
        return u_x - u

    @tf.function
    def loss_glb(self, x, u):
        loss_data = tf.reduce_mean(tf.square(self.dnn(x) - u))
        loss_pde = tf.reduce_mean(tf.square(self.residual(x)))
        return loss_data + loss_pde

    def loss_grad(self, x, u):
        with tf.GradientTape() as tp:
            loss = self.loss_glb(x, u)
        grad = tp.gradient(loss, self.params)
        return loss, grad

    @tf.function
    def grad_desc(self, x, u):
        loss, grad = self.loss_grad(x, u)
        self.optimizer.apply_gradients(zip(grad, self.params))
        return loss

    def train(self, epochs, batch):
        n = self.points.shape[0]
        history = []
        for ep in range(epochs):
            ep_loss = 0
            order = np.random.permutation(n)
            for idx in range(0, n, batch):
                x = tf.convert_to_tensor(self.points[order[idx: idx + batch]])
                u = tf.convert_to_tensor(self.values[order[idx: idx + batch]])
                loss_btch = self.grad_desc(x, u)
                ep_loss += loss_btch / int(n / batch)
            history.append(ep_loss)
        return history
"""
