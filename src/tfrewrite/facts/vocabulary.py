"""Names whose meaning tfrewrite knows without parsing a file: set-up
methods, functions that average, NumPy generator constructors, conversions
to Python numbers, ops that take a shape, calls that make variables, test
paths; and what makes a train step (the gradient tape, the optimizer
updates), what is Python logging, and which Keras methods run a loop of
their own on the host.

Pass 1 (on `ast` nodes), the rules and the pre-parse checks of where each
rule can fire (on LibCST nodes and pass-1 facts) and verify all read them,
so they live here, apart from LibCST: deciding that a file needs no rule
must not load it. The questions below take strings and counts, which each
side extracts from its own node: a fact is defined once, and the two trees
cannot disagree about it (`tests/test_fact_agreement.py`).
"""

from __future__ import annotations

from pathlib import PurePath

from tfrewrite.facts.keras_names import keras_path
from tfrewrite.facts.keras_weighted_layers import SEED_ONLY_LAYERS, WEIGHTED_LAYERS
from tfrewrite.facts.numpy_shape_arguments import NUMPY_SHAPE_ARGUMENTS
from tfrewrite.facts.tensor_kinds import VARIABLE_CONSTRUCTORS
from tfrewrite.facts.tf_shape_arguments import SHAPE_ARGUMENTS as MEASURED_SHAPE_ARGUMENTS

# Methods whose attributes are set up once, not state that changes per call.
# Builtins that iterate over their argument in Python (`zip(grads, vars)`):
# traced, they cannot iterate over a symbolic tensor.
ITERATING = frozenset({"zip", "enumerate", "list", "tuple", "map", "sorted", "reversed"})

# Methods that put what they are given into a list (`states.append(s)`): a
# list grown so changes length between calls, holds what was appended, and
# is a Python side effect in traced code.
LIST_GROWING_METHODS = frozenset({"append", "extend", "insert"})
SETUP_METHODS = frozenset({"__init__", "build", "__post_init__", "setUp", "setup"})
# Words in a method name that say it sets things up (`_build`, `create_slots`).
_SETUP_WORDS = ("init", "build", "create", "setup", "prepare", "compile", "configure")


def is_setup_method(name: str) -> bool:
    lowered = name.lower()
    return name in SETUP_METHODS or any(word in lowered for word in _SETUP_WORDS)


# Variable methods that write the variable: TensorFlow state, which a trace
# keeps and runs on every call, and through which no gradient flows.
VARIABLE_WRITES = frozenset(
    {
        "assign",
        "assign_add",
        "assign_sub",
        "scatter_update",
        "scatter_add",
        "scatter_sub",
        "scatter_nd_update",
    }
)


# Functions that average their argument: a per-batch metric averaged (TFR306).
# Conversions that keep a list's values, one per batch, along the first axis
# (`np.mean(np.array(losses))` averages what `np.mean(losses)` does); not
# `np.concatenate`, which joins the batches' rows into one axis.
ARRAY_CONVERSIONS = frozenset(
    {"numpy.array", "numpy.asarray", "numpy.stack", "tensorflow.stack", "tensorflow.constant"}
)

MEAN_FUNCTIONS = frozenset(
    {"numpy.mean", "numpy.average", "statistics.mean", "statistics.fmean", "tensorflow.reduce_mean"}
)

# Constructors of NumPy generator objects, whose methods draw on the host.
NUMPY_GENERATORS = frozenset(
    {"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"}
)

# Builtins that turn a tensor into a Python number (`float(loss)`).
HOST_CONVERSIONS = frozenset({"float", "int"})
# Builtins that read a tensor's length (`len(x)`): eagerly its first
# dimension; traced, only AutoGraph's conversion gives it (the static
# dimension, else `tf.shape(x)[0]`); without AutoGraph `len` of a symbolic
# tensor raises `TypeError`.
LENGTH_READS = frozenset({"len"})
# Keras' backend read of a value onto the host (`K.get_value(v)`, Keras 2 and
# `tf.keras` alike): traced, it leaves the graph (`init_scope`) to read a
# variable once, at trace time, and raises on a symbolic tensor.
KERAS_HOST_READS = frozenset({"backend.get_value"})

# TensorFlow ops that take a shape, and where: (position, keyword), as
# measured on TensorFlow (`scripts/tf_vocabulary.py`).
SHAPE_ARGUMENTS = MEASURED_SHAPE_ARGUMENTS

# TensorFlow ops that take a count or a size, and where: (position, keyword)
# each. A static dimension given there (`tf.range(x.shape[0] * n)`) raises
# once the trace does not know it, as a shape does.
COUNT_ARGUMENTS: dict[str, tuple[tuple[int, str], ...]] = {
    "tensorflow.range": ((0, "start"), (1, "limit"), (2, "delta")),
    "tensorflow.repeat": ((1, "repeats"),),
    "tensorflow.tile": ((1, "multiples"),),
    "tensorflow.one_hot": ((1, "depth"),),
    "tensorflow.eye": ((0, "num_rows"), (1, "num_columns")),
    "tensorflow.sequence_mask": ((1, "maxlen"),),
    "tensorflow.linspace": ((2, "num"),),
}
# Ops whose count must be a Python int when traced: no tensor can take its
# place (`tf.split(x, tf.shape(x)[0])` raises "Rank-0 tensors are not
# supported as the num_or_size_splits argument", measured on TensorFlow 2.21).
PYTHON_COUNT_ARGUMENTS: dict[str, tuple[tuple[int, str], ...]] = {
    "tensorflow.split": ((1, "num_or_size_splits"),),
    "tensorflow.unstack": ((1, "num"),),
}
# NumPy functions that build an array of a shape of Python ints
# (`np.tile(a, [n, 1])`, `np.zeros((n, 2))`), where: as measured on NumPy
# (`scripts/numpy_shape_arguments.py`). Neither `None` nor a tensor can
# stand there.
HOST_SHAPE_ARGUMENTS: dict[str, tuple[tuple[int, str], ...]] = {
    name: (place,) for name, place in NUMPY_SHAPE_ARGUMENTS.items()
}

# Keras namespaces whose classes own variables: building one makes new variables.
_STATEFUL_NAMESPACES = ("metrics.", "optimizers.")
# Classes under those namespaces that own no variables (bases, schedules).
_STATELESS_LEAVES = frozenset({"Metric", "Optimizer", "schedules"})


def weighted_layer(qualified: str | None) -> str | None:
    """The class name of a Keras layer that creates variables when it is
    built and first called (`Conv1D`, `Dense`, Keras 3's `Dropout` with its
    seed generator), as measured on Keras (`facts/keras_weighted_layers.py`);
    None for any other name. Keras 2 (`tf_keras`) gives its random layers no
    seed variable."""
    path = keras_path(qualified)
    if path is None or not path.startswith("layers."):
        return None
    leaf = path.rsplit(".", 1)[-1]
    if leaf not in WEIGHTED_LAYERS:
        return None
    if leaf in SEED_ONLY_LAYERS and (qualified or "").startswith("tf_keras."):
        return None
    return leaf


# TensorFlow 1's variable factory: variables kept in a store, by name.
GET_VARIABLE = "tensorflow.compat.v1.get_variable"


def creates_variables(qualified: str | None) -> str | None:
    """What the call makes ("a `tf.Variable`", "a Keras metric", ...) when it
    creates variables, else None."""
    if not qualified:
        return None
    if qualified == GET_VARIABLE:
        return "a variable in TensorFlow 1's variable store"
    if qualified in VARIABLE_CONSTRUCTORS:
        return "a `tf.Variable`"
    layer = weighted_layer(qualified)
    if layer is not None:
        return f"a Keras `{layer}` layer"
    path = keras_path(qualified)
    if path is not None and path.startswith(_STATEFUL_NAMESPACES):
        leaf = qualified.rsplit(".", 1)[-1]
        if ".schedules." in qualified or leaf in _STATELESS_LEAVES or not leaf[:1].isupper():
            return None
        return "a Keras metric" if ".metrics." in qualified else "a Keras optimizer"
    return None


# Packages whose classes are TensorFlow objects, or build them.
FRAMEWORK_PREFIXES = ("tensorflow", "keras", "tf_keras", "tf.", "tfp.", "tfa.", "hub.")
# Keras namespaces and classes whose objects own variables.
_VARIABLE_OWNERS = (".metrics.", ".optimizers.", ".layers.", ".models.", ".Sequential", ".Model")


def builds_variables(qualified: str) -> bool:
    """Whether the call makes an object that owns variables (a
    `tf.Variable`, a Keras model, layer, optimizer or metric): built in a
    traced step, or handed to it anew, it creates them in a later trace."""
    if qualified in VARIABLE_CONSTRUCTORS or qualified == "tensorflow.compat.v1.Variable":
        return True
    path = keras_path(qualified)
    return path is not None and any(k in f".{path}" for k in _VARIABLE_OWNERS)


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


# -- training steps ---------------------------------------------------------------------
# What makes a function a train step: it opens a gradient tape and applies
# gradients. Pass 1 (on `ast`), the rules (on LibCST) and verify all ask
# the questions below, each after extracting the same strings and counts
# from its own node, so a step is the same step on every side.

# The tape class. A `with` item opens a tape when the name it calls ends in
# this, resolved through the imports where they say (`tf.GradientTape`,
# `tensorflow.GradientTape`, `from tensorflow import GradientTape`,
# `backprop.GradientTape`) or as spelled when they do not.
GRADIENT_TAPE = "tensorflow.GradientTape"
_TAPE_CLASS = GRADIENT_TAPE.rpartition(".")[2]


def is_gradient_tape(name: str | None) -> bool:
    """Whether `name` (a dotted name, resolved where possible) is the
    `GradientTape` class: what `with <name>(...) as tape:` opens."""
    return bool(name) and name.endswith(_TAPE_CLASS)  # type: ignore[union-attr]


# Optimizer methods that apply gradients whatever their receiver and
# arguments: `opt.apply_gradients(zip(grads, variables))`, `opt.minimize(loss, variables)`.
OPTIMIZER_UPDATE_METHODS = frozenset({"apply_gradients", "minimize"})
# Keras 3's `optimizer.apply(grads, variables)`: a name too common to count
# alone, so only on a receiver named like an optimizer (`opt`, `self.optimizer`)
# and with a positional argument.
KERAS_APPLY_METHOD = "apply"
# A hand-written descent step: `w.assign_sub(lr * dw)` (not a constant step
# such as `counter.assign_sub(1)`).
DESCENT_METHOD = "assign_sub"


def is_optimizer_update(
    method: str | None, receiver: str | None, positional: int, given_variables: bool = False
) -> bool:
    """Whether `<receiver>.<method>(...)` with `positional` positional
    arguments applies gradients through an optimizer. `receiver` is the
    dotted name of what the method is called on (None when it is no name).
    `given_variables`: its second positional argument is a model's variable
    list (`sam.first_step(grads, model.trainable_variables)`, an optimizer
    of the project's own)."""
    if method in OPTIMIZER_UPDATE_METHODS:
        return True
    optimizer = "opt" in (receiver or "").rsplit(".", 1)[-1].lower()
    if given_variables and positional >= 2 and method not in _TAPE_METHODS:
        return optimizer
    if method != KERAS_APPLY_METHOD or positional < 1:
        return False
    return optimizer


# Methods that take a variable list and read gradients, not apply them.
_TAPE_METHODS = frozenset({"gradient", "jacobian", "batch_jacobian", "watch"})


def is_gradient_update(
    method: str | None,
    receiver: str | None,
    positional: int,
    first_is_number: bool | None,
    given_variables: bool = False,
) -> bool:
    """Whether a method call applies gradients: an optimizer update
    (`is_optimizer_update`) or a hand-written descent step. `first_is_number`:
    whether the call's first argument is a number literal (None when it has
    no argument); `given_variables`: its second is a model's variable list."""
    if is_optimizer_update(method, receiver, positional, given_variables):
        return True
    return method == DESCENT_METHOD and first_is_number is False


# -- Python logging ---------------------------------------------------------------------
# Python logging in traced code runs once, while tracing, and logs symbolic
# tensors: TFR205 reports it, and a train step that logs stays eager.

# Modules whose log functions are Python logging (`logging.info`,
# `absl.logging.warning`, `tf.compat.v1.logging.info`).
LOGGING_MODULES = ("logging", "absl.logging", "tensorflow.compat.v1.logging")
_LOGGING_PREFIXES = tuple(f"{module}." for module in LOGGING_MODULES)
# Calls that return a Python logger (`logging.getLogger(__name__)`, `tf.get_logger()`).
LOGGER_FACTORIES = frozenset({"logging.getLogger", "tensorflow.get_logger"})
# Methods of a logger, and functions of the logging modules, that log.
LOG_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"}
)


def is_logging_module(module: str) -> bool:
    """Whether an import of `module` brings Python logging (`import logging`,
    `from absl import logging`, `import logging.handlers`)."""
    return module in LOGGING_MODULES or module.startswith("logging.")


def is_logger_factory(qualified: str | None) -> bool:
    """Whether a call of `qualified` returns a Python logger."""
    return qualified in LOGGER_FACTORIES


def is_logging_call(method: str | None, qualified: str | None, logger_receiver: bool) -> bool:
    """Whether `<receiver>.<method>(...)` logs through Python logging.
    `qualified`: the callee resolved through the imports (`logging.info`);
    `logger_receiver`: the receiver is a logger a factory returned, called
    in place (`tf.get_logger().info`) or bound to a module-level name
    (`logger = logging.getLogger(__name__)`, then `logger.info`)."""
    if method not in LOG_METHODS:
        return False
    return logger_receiver or (qualified or "").startswith(_LOGGING_PREFIXES)


def may_be_logger(receiver: str | None) -> bool:
    """Whether a receiver is named like a logger (`self.logger`, `log`): a
    guess, for the checks that must err towards keeping code eager (a train
    step calling `self.logger.info(...)` is not decorated), never for a finding."""
    return bool(receiver) and "log" in receiver.rsplit(".", 1)[-1].lower()  # type: ignore[union-attr]


# -- Keras host loops -------------------------------------------------------------------
# Keras model methods that run a loop of their own on the host: they batch
# their input, call `.numpy()` on each result, run callbacks. Inside a
# `tf.function` they raise (`predict`: 'SymbolicTensor' object has no
# attribute 'numpy'; `fit`: OperatorNotAllowedInGraphError), so a step that
# calls one stays eager. Method -> what its loop does: "predicts",
# "evaluates" or "trains".
_KERAS_HOST_LOOPS = {
    "predict": "predicts",
    "predict_on_batch": "predicts",
    "predict_generator": "predicts",
    "evaluate": "evaluates",
    "test_on_batch": "evaluates",
    "evaluate_generator": "evaluates",
    "fit": "trains",
    "train_on_batch": "trains",
    "fit_generator": "trains",
}


# Keras layer and model methods that copy weights between the variables and
# NumPy arrays on the host: traced, `get_weights` raises (a variable in a
# graph has no value: NotImplementedError) and `set_weights` assigns what it
# was given once, at trace time. Method -> what it does to the weights.
_KERAS_HOST_WEIGHTS = {"get_weights": "reads", "set_weights": "writes"}


def keras_host_weights(method: str | None) -> str | None:
    """ "reads" or "writes" for the Keras method `method` that copies weights
    to or from NumPy arrays on the host (`get_weights`, `set_weights`)."""
    return _KERAS_HOST_WEIGHTS.get(method or "")


# A Keras model's own API: what runs its `call` (its loops), copies its
# weights, compiles, saves or describes it.
KERAS_MODEL_METHODS = frozenset(
    {
        *_KERAS_HOST_LOOPS,
        *_KERAS_HOST_WEIGHTS,
        *("compile", "build", "save", "save_weights", "load_weights", "export", "summary"),
    }
)


# Keras model methods that trace `call` with input shapes Keras chooses
# (the batch dimension unknown): its loops, which run a `tf.function` with
# `reduce_retracing=True` over their data, building a model for an input
# shape, and exporting it with its input signature.
_KERAS_TRACING_METHODS = frozenset({*_KERAS_HOST_LOOPS, "build", "save", "export"})


def runs_keras_traces(method: str | None) -> bool:
    """Whether the Keras model method `method` traces the model's `call`
    with shapes Keras chooses, where the batch dimension may be unknown."""
    return method in _KERAS_TRACING_METHODS


def keras_host_loop(method: str | None) -> str | None:
    """What the Keras model method `method` does ("predicts", "evaluates",
    "trains") when it runs its own loop on the host and so cannot run
    inside a `tf.function` (`predict`, `fit`, `evaluate`,
    `predict_on_batch`, ...); else None."""
    return _KERAS_HOST_LOOPS.get(method or "")
