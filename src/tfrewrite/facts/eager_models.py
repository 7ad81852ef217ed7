"""Keras models compiled to run eagerly.

`model.compile(..., run_eagerly=True)` makes `fit`, `evaluate` and `predict`
call the model's `train_step`, `test_step`, `predict_step` and `call` op by
op, untraced (measured on TensorFlow 2.21 / Keras 3: a NumPy draw in such a
`train_step` is fresh on every batch; without the flag it is one value drawn
while tracing). So the Keras contract that makes those methods traced code
does not hold for a class every `compile` of the project runs eagerly; a
class also compiled without the flag, anywhere, keeps it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tfrewrite.facts.index_records import ModuleIndex

# The project classes a name, as a module writes it, may build.
ClassesNamed = Callable[[ModuleIndex, str], list[tuple[ModuleIndex, str]]]


def eagerly_compiled_classes(
    indexes: Iterable[ModuleIndex], classes_named: ClassesNamed
) -> set[tuple[str, str]]:
    """(path, qualname) of each project class whose objects are compiled,
    every time, with `run_eagerly=True` (`ModuleIndex.compiled_objects`)."""
    eager: set[tuple[str, str]] = set()
    traced: set[tuple[str, str]] = set()
    for index in indexes:
        for built, runs_eagerly in index.compiled_objects:
            for target_index, qualname in classes_named(index, built):
                (eager if runs_eagerly else traced).add((target_index.path, qualname))
    return eager - traced
