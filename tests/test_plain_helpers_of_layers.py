"""TFR304 judges a model by what its methods build and call, into other
modules: a project function that builds a `Sequential` (`mlp(sizes)`) by
the layers it builds, a helper computing with TensorFlow ops alone
or operators (`clamp`, `rescale`; `squash`, whose returned names were
last bound by such) as building nothing, and probability distributions and bijectors
as no layers. An actor made of these ignores `training` (no finding); one
whose `mlp` adds dropout does not."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

UTILS = """
    import tensorflow as tf


    def mlp(sizes, activation):
        layers = []
        for units in sizes:
            layers += [tf.keras.layers.Dense(units, activation=activation)]
            {extra}
        return tf.keras.Sequential(layers)


    def clamp(x, low, high):
        return tf.clip_by_value(x, low, high)


    def rescale(x, low, high):
        return (x + 1.0) * (high - low) / 2 + low


    def squash(mu, logp):
        mu = tf.tanh(mu)
        logp -= tf.reduce_sum(tf.math.log(1.0 - mu**2 + 1e-6), axis=1)
        return mu, logp
"""

ACTOR = """
    import tensorflow as tf
    import tensorflow_probability as tfp
    from agent.utils import clamp, mlp, rescale, squash


    class Actor(tf.keras.Model):
        def __init__(self, act_dim):
            super().__init__()
            self.net = mlp([32, 32], tf.nn.relu)
            self.mu = tf.keras.layers.Dense(act_dim)
            self.noise = tfp.distributions.MultivariateNormalDiag(
                loc=tf.zeros(act_dim), scale_diag=tf.ones(act_dim)
            )

        def call(self, obs):
            mu, _ = squash(self.mu(self.net(obs)), tf.zeros([1]))
            return rescale(clamp(mu + self.noise.sample(tf.shape(obs)[0]), -1.0, 1.0), 0.0, 2.0)
"""

LEARN = """
    import tensorflow as tf
    from agent.actor import Actor

    actor = Actor(2)
    optimizer = tf.keras.optimizers.Adam()


    @tf.function
    def learn(obs):
        with tf.GradientTape() as tape:
            loss = -tf.reduce_mean(actor(obs))
        grads = tape.gradient(loss, actor.trainable_variables)
        optimizer.apply_gradients(zip(grads, actor.trainable_variables))
        return loss
"""


def _found(tmp_path: Path, extra: str) -> list[tuple[str, int]]:
    files = {
        "agent/__init__.py": "",
        "agent/utils.py": UTILS.replace("{extra}", extra),
        "agent/actor.py": ACTOR,
        "agent/learn.py": LEARN,
    }
    return found_lines(check_project(tmp_path, files, ("TFR304",)))


def test_an_actor_of_dense_layers_distributions_and_plain_helpers(tmp_path: Path) -> None:
    assert _found(tmp_path, "pass") == []


def test_an_mlp_with_dropout_is_reported(tmp_path: Path) -> None:
    extra = "layers += [tf.keras.layers.Dropout(0.1)]"
    assert _found(tmp_path, extra) == [("learn.py", 11)]
