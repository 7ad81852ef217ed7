"""Sources shared by the fast and TensorFlow tests of run-once set-up in
traced code: a module-level metric created on the first call under a `None`
guard, reset and updated on every call (TFR202 and TFR204 report nothing:
eagerly and traced alike it is created once)."""

LAZY_METRIC = """
import tensorflow as tf

_accuracy = None


@tf.function
def batch_accuracy(labels, predictions):
    global _accuracy
    if _accuracy is None:
        _accuracy = tf.keras.metrics.BinaryAccuracy()
    _accuracy.reset_state()
    _accuracy.update_state(labels, predictions)
    return _accuracy.result()
"""

# The same assignment without its guard: a new object on every eager call,
# the first trace's object on every traced call.
EVERY_CALL = LAZY_METRIC.replace(
    "    if _accuracy is None:\n        _accuracy = tf.keras.metrics.BinaryAccuracy()\n",
    "    _accuracy = _accuracy or tf.keras.metrics.BinaryAccuracy()\n",
)
