"""Train steps nothing in their project runs, for the harnesses verify
writes with stand-ins: a trainer method, a function taking its model and
optimizer, and a step whose trainer needs an environment verify cannot
make. Shared by the source and TensorFlow tests."""

TRAINER = """\
import numpy as np
import tensorflow as tf


class Trainer:
    def __init__(self, model, optimizer, noise_scale=0.1):
        self.model = model
        self.optimizer = optimizer
        self.noise_scale = noise_scale

    @tf.function
    def train_step(self, x, y):
        noise = np.random.normal(0.0, self.noise_scale, size=x.shape).astype("float32")
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x + noise, training=True) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        if loss > 0.2:
            loss = loss * 0.5
        return loss
"""

FUNCTION = """\
import tensorflow as tf


def train_step(net, opt, images, labels):
    with tf.GradientTape() as tape:
        logits = net(images, training=True)
        loss = tf.reduce_mean(
            tf.keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
        )
    grads = tape.gradient(loss, net.trainable_variables)
    opt.apply_gradients(zip(grads, net.trainable_variables))
    print("loss", loss)
    return loss
"""

AGENT = """\
import tensorflow as tf


class Agent:
    def __init__(self, env, policy, optimizer):
        self.env = env
        self.policy = policy
        self.optimizer = optimizer

    @tf.function
    def update(self, states, returns):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.policy(states) - returns))
        grads = tape.gradient(loss, self.policy.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.policy.trainable_variables))
        if loss > 1.0:
            loss = loss / self.env.scale
        return loss
"""

CRITIC = """\
import tensorflow as tf


class WassersteinGAN:
    def __init__(self, generator, critic):
        self.generator = generator
        self.critic = critic

    @tf.function
    def critic_loss(self, real, fake):
        gap = tf.reduce_mean(self.critic(fake)) - tf.reduce_mean(self.critic(real))
        if gap > 0.0:
            gap = gap * 2.0
        return gap
"""
