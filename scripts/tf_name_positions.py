#!/usr/bin/env python3
"""Generate `src/tfrewrite/facts/tf_name_positions.py` from the installed TensorFlow.

    .venv/bin/python scripts/tf_name_positions.py

Almost every TensorFlow op takes an optional `name`, and many take it
positionally: the second positional argument of `tf.sqrt(x, tf.float32)` is
`name`, not a dtype. Eagerly TensorFlow ignores the name; traced, it opens a
name scope with it, which raises `TypeError` for anything but a string. Where
each function takes `name` is a fact of the library, so it is read from the
signatures of the installed TensorFlow's public functions (nothing is
called) rather than listed by hand.

`check` and `fix` never import TensorFlow: they read the generated table.
`--check` compares the committed table with what the installed TensorFlow
gives instead of writing it. `--measure` writes nothing: it calls every
function of the table in MEASURED_NAMESPACES that runs on float32 tensors
for its required arguments, eagerly and traced, with `name=tf.float32` and
`name=3`, and prints how many ignore the name eagerly and raise traced (the
evidence TFR206's documentation cites).
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tf_vocabulary import positional_names, public_signatures  # noqa: E402

TABLE = (
    Path(__file__).resolve().parent.parent / "src" / "tfrewrite" / "facts" / "tf_name_positions.py"
)
COMMAND = "python scripts/tf_name_positions.py"

# The namespaces whose functions are read, as tfrewrite spells them: those
# whose functions make ops. (`tf.summary` takes a summary tag as `name`, and
# classes such as `tf.Variable` or `tf.TensorSpec` keep theirs: neither is
# read.)
NAMESPACES = (
    "tensorflow",
    "tensorflow.bitwise",
    "tensorflow.dtypes",
    "tensorflow.image",
    "tensorflow.linalg",
    "tensorflow.math",
    "tensorflow.nn",
    "tensorflow.random",
    "tensorflow.signal",
    "tensorflow.sparse",
    "tensorflow.strings",
)


def name_positions() -> dict[str, int | None]:
    """{qualified name: index of `name` among the parameters a positional
    argument binds, or None when `name` is keyword-only}, for every public
    function of NAMESPACES that takes `name`."""
    positions: dict[str, int | None] = {}
    for qualified, parameters in public_signatures(NAMESPACES):
        if "name" not in [p.name for p in parameters]:
            continue
        positional = positional_names(parameters)
        positions[qualified] = positional.index("name") if "name" in positional else None
    return dict(sorted(positions.items()))


# The namespaces `--measure` calls functions of.
MEASURED_NAMESPACES = ("tensorflow", "tensorflow.math", "tensorflow.nn", "tensorflow.linalg")
# Parts of a name that say a call draws random numbers, has an effect, keeps
# state, takes a callable or builds control flow: such functions are not called.
UNSAFE_WORDS = (
    "random",
    "shuffle",
    "dropout",
    "seed",
    "sample",
    "print",
    "assert",
    "write",
    "save",
    "load",
    "import",
    "func",
    "map_fn",
    "scan",
    "fold",
    "while",
    "cond",
    "case",
    "switch",
    "timestamp",
    "gradients",
    "hessians",
    "identity_n",
)


def traced_outcomes(names: list[str] | None = None) -> dict[str, tuple[str, str]]:
    """{qualified name: (outcome eagerly, outcome traced)} of calling each
    function (of `names`, or every measurable one of the table) on float32
    tensors for its required arguments, with a dtype and then an int as
    `name`: "ok", or the name of the exception either raises first.
    Functions that fail without a name (eagerly or traced), or whose names
    say they have effects, are left out."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    if names is None:
        names = [
            name
            for name in name_positions()
            if name.rpartition(".")[0] in MEASURED_NAMESPACES
            and not any(word in name.rpartition(".")[2].lower() for word in UNSAFE_WORDS)
        ]
    outcomes: dict[str, tuple[str, str]] = {}
    for qualified in names:
        function = tf
        for part in qualified.split(".")[1:]:
            function = getattr(function, part)
        parameters = list(inspect.signature(function).parameters.values())
        required = [
            p
            for p in parameters
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        args = [x] * len(required)
        try:
            function(*args)
            tf.function(lambda function=function, args=args: function(*args), autograph=False)()
        except Exception:  # fails on tensors alone, or traced without a name: nothing to measure
            continue

        def outcome(traced: bool, function=function, args=args) -> str:
            for name in (tf.float32, 3):

                def call(name=name):
                    return function(*args, name=name)

                try:
                    (tf.function(call, autograph=False) if traced else call)()
                except Exception as error:
                    return type(error).__name__
            return "ok"

        outcomes[qualified] = (outcome(False), outcome(True))
    return outcomes


def render(tensorflow_version: str, positions: dict[str, int | None]) -> str:
    """The source of the generated module."""
    lines = [
        '"""Where TensorFlow functions take `name`: generated by',
        f"`{COMMAND}` from TensorFlow {tensorflow_version}'s signatures; do not edit.",
        "",
        "`NAME_POSITIONS` maps a function's qualified name to the index of its",
        "`name` parameter among those a positional argument binds, or None when",
        "`name` is keyword-only: `tf.sqrt(x, tf.float32)` passes `tf.float32` as",
        "`name`, as `tf.sqrt(x, name=tf.float32)` does.",
        '"""',
        "",
        f'TENSORFLOW_VERSION = "{tensorflow_version}"',
        "",
        "NAME_POSITIONS: dict[str, int | None] = {",
        *(f'    "{name}": {index},' for name, index in positions.items()),
        "}",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="compare the committed table instead of writing it"
    )
    parser.add_argument(
        "--measure",
        action="store_true",
        help="count the ops that raise traced with a non-string name",
    )
    args = parser.parse_args(argv)
    import tensorflow as tf

    if args.measure:
        outcomes = traced_outcomes()
        raising = [n for n, (eager, traced) in outcomes.items() if eager == "ok" and traced != "ok"]
        print(f"TensorFlow {tf.__version__}: {len(raising)} of {len(outcomes)} functions ignore")
        print("a non-string name eagerly and raise traced; the others:")
        for name, (eager, traced) in outcomes.items():
            if name not in raising:
                print(f"  {name}: eagerly {eager}, traced {traced}")
        return 0

    from generated_tables import write_or_check  # a sibling script: run from scripts/

    return write_or_check({TABLE: render(tf.__version__, name_positions())}, COMMAND, args.check)


if __name__ == "__main__":
    sys.exit(main())
