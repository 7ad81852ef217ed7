"""NumPy math on a helper's tensor result, shown under TensorFlow: the
original raises when traced, the rewrite traced agrees with the original
run eagerly (also without AutoGraph)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.test_helper_results import HELPER

from tfrewrite.api import fix_source

from .equivalence import load_file_module

pytestmark = pytest.mark.tensorflow


def test_the_rewrite_traced_matches_the_original_eager(tmp_path) -> None:
    import tensorflow as tf

    original_source = HELPER.replace("{call}", "half(x)")
    # Without the module's own traced call, which raises at import.
    importable = original_source.replace("magnitude(tf.ones(3))\n", "")
    original = load_file_module(importable, tmp_path, "helper_original")
    x = tf.constant([-2.0, 0.5, 3.0])
    with _eager():
        expected = original.magnitude(x)
    with pytest.raises(Exception, match="(?i)numpy|symbolic|convert"):
        original.magnitude(x)  # traced
    rewritten = load_file_module(
        fix_source(original_source, select=["TFR104"]), tmp_path, "helper_fixed"
    )
    np.testing.assert_allclose(rewritten.magnitude(x).numpy(), np.asarray(expected))
    plain = tf.function(rewritten.magnitude.python_function, autograph=False)
    np.testing.assert_allclose(plain(x).numpy(), np.asarray(expected))


class _eager:
    """Run `tf.function`s eagerly inside the block (the original as written)."""

    def __enter__(self) -> None:
        import tensorflow as tf

        tf.config.run_functions_eagerly(True)

    def __exit__(self, *exc: object) -> None:
        import tensorflow as tf

        tf.config.run_functions_eagerly(False)
