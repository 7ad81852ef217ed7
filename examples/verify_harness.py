"""What `tfrewrite verify` needs to run `custom_training_loop.train_step`:
a seeded model, an optimizer and a few batches (see `pyproject.toml`)."""

import keras
import numpy as np
from custom_training_loop import build_model


def build():
    rng = np.random.default_rng(0)
    batches = [
        (
            rng.normal(size=(32, 20)).astype("float32"),
            rng.integers(0, 2, size=(32,)).astype("int32"),
        )
        for _ in range(4)
    ]
    return {
        "model": build_model(),
        "optimizer": keras.optimizers.SGD(learning_rate=0.05),
        "batches": batches,
    }
