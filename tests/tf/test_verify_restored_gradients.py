"""Gradients a NumPy → TensorFlow rewrite restores: verify takes them when the
original's gradient was cut to zero and the original's value confirms them
(finite differences), and still reports a rewrite whose gradient is wrong; a
traced failure the original shares is the original's, in gradients too."""

from __future__ import annotations

from tfrewrite.api import fix_source
from tfrewrite.verify.checks import CHECK_GRADIENTS, Options, Request, verify

FAST = Options(samples=120, search=48)

# A critic loss whose gradient penalty is computed with NumPy: eagerly its
# value is right, but the tape records nothing through it.
PENALTY = """\
import numpy as np
import tensorflow as tf


def critic_loss(real, fake, penalty):
    gap = tf.reduce_mean(fake) - tf.reduce_mean(real)
    slope = np.linalg.norm(penalty[0])
    return gap + 10.0 * tf.reduce_mean((slope - 1.0) ** 2)


@tf.function
def critic_step(critic, optimizer, real, fake):
    with tf.GradientTape() as tape:
        with tf.GradientTape() as inner:
            inner.watch(real)
            score = critic(real)
        penalty = inner.gradient(score, [real])
        loss = critic_loss(critic(real), critic(fake), penalty)
    grads = tape.gradient(loss, critic.trainable_variables)
    optimizer.apply_gradients(zip(grads, critic.trainable_variables))
"""


def _request(original: str, rewrite: str, qualname: str, fixes: tuple[str, ...]) -> Request:
    return Request(
        qualname=qualname,
        original_source=original,
        rewrite_source=rewrite,
        path="losses.py",
        options=FAST,
        fixes=fixes,
    )


def test_a_restored_gradient_confirmed_by_finite_differences_is_equivalent() -> None:
    rewrite = fix_source(PENALTY, select=["TFR104"], unsafe_fixes=True)
    assert "tf.norm(penalty[0])" in rewrite
    result = verify(_request(PENALTY, rewrite, "critic_loss", ("TFR104 line 7",)))
    assert result["verdict"] == "equivalent", result
    assert any("gradients flow with respect to `penalty`" in w for w in result["warnings"])


def test_a_restored_gradient_is_compared_only_when_the_fix_claims_it() -> None:
    # The same rewrite, its fixes unknown: the gradient differs from the
    # original's, and nothing says that was meant.
    rewrite = fix_source(PENALTY, select=["TFR104"], unsafe_fixes=True)
    result = verify(_request(PENALTY, rewrite, "critic_loss", ()))
    assert result["verdict"] == "mismatch"
    failed = {c["name"] for c in result["checks"] if not c["ok"]}
    assert failed == {CHECK_GRADIENTS}


def test_a_wrong_restored_gradient_is_a_mismatch() -> None:
    # Same value, twice the slope's gradient: the finite difference of the
    # original's value disagrees.
    wrong = PENALTY.replace(
        "slope = np.linalg.norm(penalty[0])",
        "slope = 2.0 * tf.norm(penalty[0]) - tf.stop_gradient(tf.norm(penalty[0]))",
    )
    result = verify(_request(PENALTY, wrong, "critic_loss", ("TFR104 line 7",)))
    assert result["verdict"] == "mismatch", result
    gradients = next(c for c in result["checks"] if c["name"] == CHECK_GRADIENTS)
    assert "is not the derivative of the original's value" in gradients["detail"]


# A decorated loss that iterates over its arguments: traced, that raises on
# a tensor argument, before the rewrite (which only drops the decorator) and
# after it; the gradient of the rewrite raises as the original's trace does.
ZIPPED = """\
import tensorflow as tf


@tf.function
def feature_loss(real_features, fake_features):
    loss = 0.0
    for real, fake in zip(real_features, fake_features):
        loss += tf.reduce_mean(tf.abs(real - fake))
    return loss
"""


def test_a_gradient_failure_the_original_shares_traced_is_not_a_mismatch() -> None:
    rewrite = ZIPPED.replace("@tf.function\n", "")
    result = verify(_request(ZIPPED, rewrite, "feature_loss", ("TFR301 line 4",)))
    assert result["verdict"] != "mismatch", result
    assert any("as the original does" in w for w in result["warnings"])


# A loss whose gradient moves when traced by `slope` (relative), as an
# ill-conditioned loss's does under graph optimisations: eagerly 1.0, traced
# 1 + slope. Its value is the same either way.
NOISY = """\
import tensorflow as tf


@tf.custom_gradient
def _noisy_identity(x):
    def grad(dy):
        return dy * (1.0 if tf.executing_eagerly() else 1.0 + {slope})

    return tf.identity(x), grad


def noisy_loss(x):
    return tf.reduce_sum(_noisy_identity(x) * 3.0)
"""


def test_a_gradient_within_the_noise_of_tracing_the_original_is_equivalent() -> None:
    original = NOISY.replace("{slope}", "1e-3")
    rewrite = NOISY.replace("{slope}", "2e-3")
    result = verify(_request(original, rewrite, "noisy_loss", ("TFR107 line 14",)))
    assert result["verdict"] == "equivalent", result
    assert any(w.startswith("gradients differ") for w in result["warnings"])


def test_a_gradient_beyond_the_noise_of_tracing_the_original_is_a_mismatch() -> None:
    original = NOISY.replace("{slope}", "1e-3")
    rewrite = NOISY.replace("{slope}", "1e-2")
    result = verify(_request(original, rewrite, "noisy_loss", ("TFR107 line 14",)))
    assert result["verdict"] == "mismatch", result
    assert {c["name"] for c in result["checks"] if not c["ok"]} == {CHECK_GRADIENTS}
