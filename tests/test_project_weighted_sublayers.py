"""TFR308 follows a sublayer into the module that defines it: a layer class
deriving from `Dense`, held by a model of another module, owns weights, and
so does a `Sequential` of a list its `__init__` fills before building it."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

LAYERS = """
    import tensorflow as tf


    class SineDense(tf.keras.layers.Dense):
        def call(self, x):
            return tf.sin(super().call(x))


    class Scale(tf.keras.layers.Layer):
        def call(self, x):
            return 2.0 * x
"""

ENCODER = """
    import tensorflow as tf
    from lib import layers


    class Encoder(tf.keras.Model):
        def __init__(self, units, depth):
            super().__init__()
            blocks = [layers.SineDense(units)]
            for _ in range(depth):
                blocks.append(layers.SineDense(units))
            self.net = tf.keras.Sequential(blocks)

        @tf.function
        def call(self, x):
            return tf.reduce_mean(self.net(x), axis=1)
"""

MODEL = """
    import tensorflow as tf
    from lib.encoder import Encoder
    from lib.layers import Scale, SineDense


    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder(8, 2)
            self.head = SineDense(1)

        @tf.function
        def call(self, x):
            return self.head(self.encoder(x))


    class Rescaled(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.scale = Scale()

        @tf.function
        def call(self, x):
            return self.scale(x)
"""


def test_sublayers_of_other_modules_and_a_filled_sequential(tmp_path: Path) -> None:
    files = {
        "lib/__init__.py": "",
        "lib/layers.py": LAYERS,
        "lib/encoder.py": ENCODER,
        "lib/model.py": MODEL,
    }
    found = check_project(tmp_path, files, ("TFR308",))
    # `Rescaled` holds only `Scale`, a layer with no weights of its own.
    assert found_lines(found) == [("encoder.py", 13), ("model.py", 12)]


ADDS_ITS_OWN = """
    import tensorflow as tf


    class Scale(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.add_weight(shape=(1,), initializer="ones")

        def call(self, x):
            return self.w * x


    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.scale = Scale()

        @tf.function
        def call(self, x):
            return self.scale(x)
"""


def test_a_sublayer_of_the_file_adding_its_own_weight(tmp_path: Path) -> None:
    found = check_project(tmp_path, {"net.py": ADDS_ITS_OWN}, ("TFR308",))
    assert found_lines(found) == [("net.py", 18)]


# A layer handed its cell by the model that builds both (`Recurrent(Cell(8))`).
RECURRENT = """
    import tensorflow as tf

    from cells import Cell


    class Recurrent(tf.keras.layers.Layer):
        def __init__(self, cell):
            super().__init__()
            self.cell = cell

        @tf.function
        def call(self, x):
            return self.cell(x)


    class Model(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.rnn = Recurrent(CELL)

        def call(self, x):
            return self.rnn(x)
"""

CELLS = """
    import tensorflow as tf


    class Cell(tf.keras.layers.Layer):
        def __init__(self, units):
            super().__init__()
            self.dense = tf.keras.layers.Dense(units)

        def call(self, x):
            return self.dense(x)


    class Plain(tf.keras.layers.Layer):
        def call(self, x):
            return 2.0 * x
"""


def test_a_weighted_cell_handed_to_the_constructor(tmp_path: Path) -> None:
    files = {"model.py": RECURRENT.replace("CELL", "Cell(8)"), "cells.py": CELLS}
    assert found_lines(check_project(tmp_path, files, ("TFR308",))) == [("model.py", 11)]


def test_a_cell_without_weights_handed_to_the_constructor(tmp_path: Path) -> None:
    model = RECURRENT.replace("CELL", "Plain()").replace("import Cell", "import Plain")
    files = {"model.py": model, "cells.py": CELLS}
    assert check_project(tmp_path, files, ("TFR308",)) == []
