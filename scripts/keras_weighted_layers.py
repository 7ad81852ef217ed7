#!/usr/bin/env python3
"""Generate `src/tfrewrite/facts/keras_weighted_layers.py` from the installed Keras.

    .venv/bin/python scripts/keras_weighted_layers.py

Which Keras layers create variables when they are built and first called is
a fact of Keras, so it is measured rather than listed by hand: every public
class of `keras.layers` that is a `Layer` is constructed with minimal
arguments (ARGUMENTS gives a small value for each required parameter, by
its name) and called on small inputs (float tensors of rank 2 to 5, int and
string tensors, a pair of tensors) until one call succeeds. Every
`tf.Variable` created meanwhile, by the constructor or by the first call,
is counted with `tf.variable_creator_scope`: a layer that creates one,
constructed in traced code, raises "tf.function only supports singleton
tf.Variables created on the first call" (and, eagerly, starts from fresh
weights on every call).

A class that creates only the state of a random seed generator (Keras 3's
`Dropout`, `GaussianNoise`, the random augmentation layers) is recorded as
well: its variable is no weight, but tracing refuses it the same way.
Classes that no minimal construction and call succeeds on are listed with
the reason, undecided.

`check` and `fix` never import Keras: they read the generated table.
`--check` compares the committed table with what the installed Keras gives
instead of writing it.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from keras_layer_probes import (  # a sibling script: run from scripts/
    ARGUMENTS,
    constructions,
    each_layer_class,
    inputs,
    required,
    value,
    versions,
)

TABLE = (
    Path(__file__).resolve().parent.parent
    / "src"
    / "tfrewrite"
    / "facts"
    / "keras_weighted_layers.py"
)
COMMAND = "python scripts/keras_weighted_layers.py"

# The longest reason recorded for an undecided class (one line of the table).
REASON_LENGTH = 68


def _creations(tf: Any, run: Callable[[], Any]) -> tuple[list[str], BaseException | None]:
    """The names of the `tf.Variable`s `run` creates, and what it raised."""
    made: list[str] = []

    def creator(next_creator: Callable[..., Any], **kwargs: Any) -> Any:
        variable = next_creator(**kwargs)
        made.append(variable.name)
        return variable

    with tf.variable_creator_scope(creator):
        try:
            run()
        except Exception as err:  # a probe Keras rejects tells nothing
            return made, err
    return made, None


def measure(cls: type, tf: Any, layers: Any) -> tuple[list[str] | None, str]:
    """The variables a minimal construction and first call of `cls` create
    (None when none succeeded), and why the last probe failed when none did."""
    try:
        names = required(cls)
    except (TypeError, ValueError) as err:
        return None, f"no signature: {err}"
    missing = [name for name in names if name not in ARGUMENTS]
    if missing:
        return None, f"needs {', '.join(missing)}"
    reason = "no probe call succeeded"
    for arguments, (args, kwargs) in itertools.product(
        list(constructions(names)), list(inputs(tf))
    ):

        def run(
            arguments: dict[str, Any] = arguments,
            args: tuple[Any, ...] = args,
            kwargs: dict[str, Any] = kwargs,
        ) -> None:
            layer = cls(**{name: value(given, layers) for name, given in arguments.items()})
            layer(*args, **kwargs)

        made, error = _creations(tf, run)
        if error is None:
            return made, ""
        reason = _reason(error)
    return None, reason


def _reason(error: BaseException) -> str:
    """The error's type and the first line of its message that says
    something (Keras wraps the cause in "Exception encountered when
    calling ..." and colours it), short enough for one line of the table."""
    lines = [
        re.sub(r"\x1b\[[0-9;]*m|\{\{.*?\}\}", "", line).strip() for line in str(error).splitlines()
    ]
    said = [line for line in lines if line and not line.startswith("Exception encountered")]
    text = f"{type(error).__name__}: {said[0]}" if said else type(error).__name__
    return text if len(text) <= REASON_LENGTH else text[: REASON_LENGTH - 3].rstrip() + "..."


def _is_seed_state(name: str) -> bool:
    return "seed_generator" in name


def weighted_layers() -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """(classes that create variables, those whose only variable is a seed
    generator's state, {undecided class: reason}), measured on the installed
    Keras, each class under every public name of `keras.layers`."""
    weighted: set[str] = set()
    seeded: set[str] = set()
    undecided: dict[str, str] = {}
    for name, (made, reason) in each_layer_class(measure).items():
        if made is None:
            undecided[name] = reason
        elif made:
            weighted.add(name)
            if all(_is_seed_state(v) for v in made):
                seeded.add(name)
    return frozenset(weighted), frozenset(seeded), dict(sorted(undecided.items()))


def render(
    tensorflow_version: str,
    keras_version: str,
    weighted: frozenset[str],
    seeded: frozenset[str],
    undecided: dict[str, str],
) -> str:
    """The source of the generated module."""
    lines = [
        f'"""Keras layers that create variables: generated by `{COMMAND}`',
        f"from Keras {keras_version} (TensorFlow {tensorflow_version}); do not edit.",
        "",
        "Each public `keras.layers` class was constructed with minimal arguments and",
        "called on a small input; `WEIGHTED_LAYERS` holds the names of those that",
        "created a `tf.Variable` meanwhile (weights, moving statistics or a random",
        "seed's state): constructed in traced code, such a layer makes tracing",
        'raise "tf.function only supports singleton tf.Variables created on the',
        'first call". `SEED_ONLY_LAYERS` are those whose only variable is a seed',
        "generator's state. `UNDECIDED_LAYERS` maps the classes no minimal",
        "construction and call succeeded on to the reason.",
        '"""',
        "",
        f'TENSORFLOW_VERSION = "{tensorflow_version}"',
        f'KERAS_VERSION = "{keras_version}"',
        "",
        "WEIGHTED_LAYERS = frozenset(",
        "    {",
        *(f'        "{name}",' for name in sorted(weighted)),
        "    }",
        ")",
        "",
        "SEED_ONLY_LAYERS = frozenset(",
        "    {",
        *(f'        "{name}",' for name in sorted(seeded)),
        "    }",
        ")",
        "",
        "UNDECIDED_LAYERS: dict[str, str] = {",
        *(f"    {json.dumps(name)}: {json.dumps(reason)}," for name, reason in undecided.items()),
        "}",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from generated_tables import table_main  # a sibling script: run from scripts/

    return table_main(
        argv,
        __doc__.split("\n\n")[0],
        COMMAND,
        lambda: {TABLE: render(*versions(), *weighted_layers())},
    )


if __name__ == "__main__":
    sys.exit(main())
