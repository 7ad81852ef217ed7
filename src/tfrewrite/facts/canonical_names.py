"""One name for each TensorFlow object, whichever path imports it.

TensorFlow reaches one object under several paths: Keras through
TensorFlow's private `tensorflow.python.keras` as through `tensorflow.keras`,
`tf.compat.v2.X` as `tf.X`, and many `tf.compat.v1` names are the
TensorFlow 2 function itself (`tf.compat.v1.reshape` is `tf.reshape`). Name
resolution (pass 1's `resolve` and `NameResolver.qualified_name`) names
each by its TensorFlow 2 path, so every fact known of `tensorflow.reshape`
holds for code that spells it the old way. Strings only: pass 1 and the
pre-parse checks read it.
"""

from __future__ import annotations

from tfrewrite.facts.tf_compat_aliases import COMPAT_V1_ALIASES

# TensorFlow's private path to its Keras: the same classes as `tensorflow.keras`.
_PRIVATE_PACKAGE = "tensorflow.python.keras"
_PUBLIC_PACKAGE = "tensorflow.keras"
_COMPAT_V1 = "tensorflow.compat.v1."
_COMPAT_V2 = "tensorflow.compat.v2."


def canonical_name(qualified: str) -> str:
    """`qualified` as TensorFlow 2 names the same object: its private Keras
    path made public (`tensorflow.python.keras.layers.Layer` ->
    `tensorflow.keras.layers.Layer`), `tf.compat.v2` dropped, and a
    `tf.compat.v1` name that is the TensorFlow 2 function itself
    (`tensorflow.compat.v1.reshape` -> `tensorflow.reshape`, measured:
    `tf_compat_aliases`); any other name as it is."""
    if qualified.startswith(_COMPAT_V2):
        return "tensorflow." + qualified[len(_COMPAT_V2) :]
    if qualified.startswith(_COMPAT_V1):
        path = qualified[len(_COMPAT_V1) :]
        return "tensorflow." + path if path in COMPAT_V1_ALIASES else qualified
    if not qualified.startswith(_PRIVATE_PACKAGE):
        return qualified
    rest = qualified[len(_PRIVATE_PACKAGE) :]
    if rest and not rest.startswith("."):
        return qualified  # `tensorflow.python.keras_utils`: another module
    return _PUBLIC_PACKAGE + rest
