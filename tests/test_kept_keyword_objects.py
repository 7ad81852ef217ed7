"""Where a traced method's Python state comes from, in two shapes a GAN's
image pool takes:

- a model that keeps its keyword arguments as attributes
  (`self.__dict__.update(kwargs)`), built by a function in another module
  that passes it a plain Python pool (`GAN(buffer=Pool(50), ...)`): the
  traced loss calling `self.buffer.update(fake)` runs the pool's method,
  whose list writes and Python draws happen once, while tracing;
- module-level pools bound together (`pool_a, pool_b = [], []`), which a
  traced helper appends to.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.projects import check_project, found_lines

from tfrewrite.api import check_source

POOL = """
    import random


    class Pool:
        def __init__(self, size):
            self.size = size
            self.images = []

        def update(self, image):
            if len(self.images) < self.size:
                self.images.append(image)
                return image
            if random.random() < 0.5:
                return image
            index = random.randint(0, len(self.images) - 1)
            kept = self.images[index]
            self.images[index] = image
            return kept
"""

MODEL = """
    import tensorflow as tf


    class GAN(tf.keras.Model):
        def __init__(self, **kwargs):
            super().__init__()
            self.__dict__.update(kwargs)

        @tf.function
        def disc_loss(self, real, fake):
            fake = self.buffer.update(fake)
            return tf.reduce_mean(self.disc(real)) - tf.reduce_mean(self.disc(fake))
"""

BUILDER = """
    import tensorflow as tf

    from model import GAN
    from pool import Pool


    def build_gan():
        disc = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        return GAN(disc=disc, buffer={buffer})
"""


def _check(tmp_path: Path, buffer: str) -> list[tuple[str, int]]:
    files = {
        "pool.py": POOL,
        "model.py": MODEL,
        "builder.py": BUILDER.format(buffer=buffer),
    }
    findings = check_project(tmp_path, files, ("TFR202", "TFR106"))
    return found_lines(findings)


def test_a_pool_passed_by_keyword_runs_in_the_traced_loss(tmp_path: Path) -> None:
    """The pool's list writes (TFR202) and Python draws (TFR106) run once."""
    assert _check(tmp_path, "Pool(50)") == [
        ("pool.py", 11),
        ("pool.py", 13),
        ("pool.py", 15),
        ("pool.py", 17),
    ]


def test_an_object_the_builder_cannot_place_tells_nothing(tmp_path: Path) -> None:
    assert _check(tmp_path, "make_pool()") == []


UNPACKED = """
    import numpy as np
    import tensorflow as tf


    def update_pool(image, size=50):
        if len(pool_a) < size:
            pool_a.append(image)
            return image
        pool_a[0] = image
        return image


    @tf.function
    def train_disc(real, fake):
        fake = update_pool(fake)
        return tf.reduce_mean(real - fake)


    pool_a, pool_b = [], []
"""


def test_module_lists_bound_together_are_state_a_traced_helper_writes() -> None:
    findings = check_source(textwrap.dedent(UNPACKED), select=["TFR201", "TFR202"])
    assert [(f.code, f.start.line) for f in findings] == [
        ("TFR201", 7),
        ("TFR202", 8),
        ("TFR202", 10),
    ]
