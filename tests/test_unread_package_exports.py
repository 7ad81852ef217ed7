"""A name imported from a package whose `__init__.py` is not among the
files checked (`tfrewrite check examples/ lib/trainers/base.py`):
`from lib.trainers import BaseTrainer` is the one `BaseTrainer` a module of
that package defines, which is what such an `__init__` re-exports. A
subclass then inherits the traced step that calls its overrides. With the
`__init__` read, it says what the package exports; with two modules
defining the name, nothing is guessed."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

BASE = """
    import tensorflow as tf


    class BaseTrainer:
        def __init__(self):
            self.step = tf.function(self._step)

        def _step(self, x, y):
            return self.loss(x, y)

        def loss(self, x, y):
            raise NotImplementedError
"""

TRAIN = """
    import tensorflow as tf
    from lib.trainers import BaseTrainer


    class Trainer(BaseTrainer):
        def loss(self, x, y):
            error = tf.reduce_mean(tf.square(x - y))
            if error > 1.0:
                error = tf.sqrt(error)
            return error
"""


def _tensor_ifs(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int]]:
    return found_lines(check_project(tmp_path, files, ("TFR101",)))


def test_a_base_class_from_a_package_whose_init_is_not_read(tmp_path: Path) -> None:
    files = {"lib/trainers/base.py": BASE, "examples/train.py": TRAIN}
    assert _tensor_ifs(tmp_path, files) == [("train.py", 8)]


def test_a_read_init_says_what_the_package_exports(tmp_path: Path) -> None:
    """Its `__init__` exports nothing: `BaseTrainer` is not the package's."""
    files = {
        "lib/trainers/__init__.py": "",
        "lib/trainers/base.py": BASE,
        "examples/train.py": TRAIN,
    }
    assert _tensor_ifs(tmp_path, files) == []


def test_two_modules_defining_the_name_leave_it_unknown(tmp_path: Path) -> None:
    other = BASE.replace("return self.loss(x, y)", "return x")
    files = {
        "lib/trainers/base.py": BASE,
        "lib/trainers/legacy.py": other,
        "examples/train.py": TRAIN,
    }
    assert _tensor_ifs(tmp_path, files) == []
