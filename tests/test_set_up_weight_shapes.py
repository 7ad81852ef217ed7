"""A layer's weight, made once in `build` or `__init__` (`add_weight`,
`tf.Variable`, a tensor drawn from a shape the layer knows), has a whole
static shape in every trace: `tf.reshape(w, w.shape)` cannot meet an unknown
dimension (TFR107). A spectral-norm helper every call site of which hands
it such a weight reads whole shapes too; handed a batch anywhere, or an
attribute `call` sets from its input, it does not."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

HELPER = """
    import tensorflow as tf


    def normalised(weight):
        dims = weight.shape.as_list()
        flat = tf.reshape(weight, [-1, dims[-1]])
        sigma = tf.norm(flat)
        return tf.reshape(flat / sigma, dims)
"""

LAYERS = """
    import tensorflow as tf

    from norms import normalised


    class NormedDense(tf.keras.layers.Layer):
        def __init__(self, units):
            super().__init__()
            self.units = units
            self.kernel = None

        def build(self, input_shape):
            self.kernel = tf.random.normal([input_shape[-1], self.units])

        def call(self, x):
            return tf.matmul(x, normalised(self.kernel))


    class NormedConv(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(3, 3, input_shape[-1], 8))

        def call(self, x):
            kernel = tf.reshape(self.kernel, self.kernel.shape)
            return tf.nn.conv2d(x, normalised(self.kernel), 1, "SAME") + tf.reduce_sum(kernel)
"""


def test_a_weight_made_at_set_up_has_a_whole_shape(tmp_path: Path) -> None:
    found = check_project(tmp_path, {"norms.py": HELPER, "layers.py": LAYERS}, ("TFR107",))
    assert found_lines(found) == []


def test_a_helper_also_handed_a_batch_reads_an_open_shape(tmp_path: Path) -> None:
    model = """
        import tensorflow as tf

        from norms import normalised


        class Whitened(tf.keras.Model):
            def call(self, x):
                return normalised(x)
    """
    files = {"norms.py": HELPER, "layers.py": LAYERS, "model.py": model}
    found = check_project(tmp_path, files, ("TFR107",))
    assert found_lines(found) == [("norms.py", 8)]


def test_an_attribute_call_sets_from_its_input_has_an_open_shape(tmp_path: Path) -> None:
    layer = """
        import tensorflow as tf


        class Cached(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.cache = tf.zeros([1, input_shape[-1]])

            def call(self, x):
                self.cache = tf.nn.relu(x)
                return tf.reshape(self.cache, self.cache.shape)
    """
    found = check_project(tmp_path, {"cached.py": layer}, ("TFR107",))
    assert found_lines(found) == [("cached.py", 10)]
