"""Names whose meaning tfrewrite knows without parsing a file: set-up
methods, functions that average, NumPy generator constructors, conversions
to Python numbers, ops that take a shape, calls that make variables, test
paths.

Both the rules (on LibCST nodes) and the pass-1 tests of where each rule can
fire (`rule_scopes`, on `ast` facts) read them, so they live here, apart
from LibCST: deciding that a file needs no rule must not load it.
"""

from __future__ import annotations

from pathlib import PurePath

from tfrewrite.facts.tensor_kinds import VARIABLE_CONSTRUCTORS

# Methods whose attributes are set up once, not state that changes per call.
SETUP_METHODS = frozenset({"__init__", "build", "__post_init__", "setUp", "setup"})
# Words in a method name that say it sets things up (`_build`, `create_slots`).
_SETUP_WORDS = ("init", "build", "create", "setup", "prepare", "compile", "configure")


def is_setup_method(name: str) -> bool:
    lowered = name.lower()
    return name in SETUP_METHODS or any(word in lowered for word in _SETUP_WORDS)


# Functions that average their argument: a per-batch metric averaged (TFR306).
MEAN_FUNCTIONS = frozenset(
    {"numpy.mean", "numpy.average", "statistics.mean", "statistics.fmean", "tensorflow.reduce_mean"}
)

# Constructors of NumPy generator objects, whose methods draw on the host.
NUMPY_GENERATORS = frozenset(
    {"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"}
)

# Builtins that turn a tensor into a Python number (`float(loss)`).
HOST_CONVERSIONS = frozenset({"float", "int"})

# TensorFlow ops that take a shape, and where: (position, keyword).
SHAPE_ARGUMENTS: dict[str, tuple[int, str]] = {
    "tensorflow.random.normal": (0, "shape"),
    "tensorflow.random.uniform": (0, "shape"),
    "tensorflow.random.truncated_normal": (0, "shape"),
    "tensorflow.random.stateless_normal": (0, "shape"),
    "tensorflow.random.stateless_uniform": (0, "shape"),
    "tensorflow.random.stateless_truncated_normal": (0, "shape"),
    "tensorflow.zeros": (0, "shape"),
    "tensorflow.ones": (0, "shape"),
    "tensorflow.fill": (0, "dims"),
    "tensorflow.reshape": (1, "shape"),
    "tensorflow.broadcast_to": (1, "shape"),
}

# Keras namespaces whose classes own variables: building one makes new variables.
_STATEFUL_NAMESPACES = (
    "tensorflow.keras.metrics.",
    "tensorflow.keras.optimizers.",
    "keras.metrics.",
    "keras.optimizers.",
    "tf_keras.metrics.",
    "tf_keras.optimizers.",
)
# Classes under those namespaces that own no variables (bases, schedules).
_STATELESS_LEAVES = frozenset({"Metric", "Optimizer", "schedules"})


def creates_variables(qualified: str | None) -> str | None:
    """What the call makes ("a `tf.Variable`", "a Keras metric", ...) when it
    creates variables, else None."""
    if not qualified:
        return None
    if qualified in VARIABLE_CONSTRUCTORS:
        return "a `tf.Variable`"
    if qualified.startswith(_STATEFUL_NAMESPACES):
        leaf = qualified.rsplit(".", 1)[-1]
        if ".schedules." in qualified or leaf in _STATELESS_LEAVES or not leaf[:1].isupper():
            return None
        return "a Keras metric" if ".metrics." in qualified else "a Keras optimizer"
    return None


# Packages whose classes are TensorFlow objects, or build them.
KERAS_PREFIXES = ("keras.", "tensorflow.keras.", "tf_keras.")
FRAMEWORK_PREFIXES = ("tensorflow", "keras", "tf_keras", "tf.", "tfp.", "tfa.", "hub.")
# Keras namespaces and classes whose objects own variables.
_VARIABLE_OWNERS = (".metrics.", ".optimizers.", ".layers.", ".models.", ".Sequential", ".Model")


def builds_variables(qualified: str) -> bool:
    """Whether the call makes an object that owns variables (a
    `tf.Variable`, a Keras model, layer, optimizer or metric): built in a
    traced step, or handed to it anew, it creates them in a later trace."""
    if qualified in VARIABLE_CONSTRUCTORS or qualified == "tensorflow.compat.v1.Variable":
        return True
    return qualified.startswith(KERAS_PREFIXES) and any(k in qualified for k in _VARIABLE_OWNERS)


def is_test_path(path: str) -> bool:
    """Test code, where forcing eager execution is a legitimate tool."""
    pure = PurePath(path)
    name = pure.name
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(part in ("test", "tests", "testing") for part in pure.parts[:-1])
    )
