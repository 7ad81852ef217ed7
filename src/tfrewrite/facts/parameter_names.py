"""Parameter names that say what a parameter holds.

Pass 1 (the standard `ast` index, which never imports LibCST) and the tensor
analysis must read a name the same way: a prefilter that let `training` count
as a Python value while the analysis took it for a tensor would skip a file
with a finding. So the names live here, in one place both import.
"""

from __future__ import annotations

# Parameter names that carry tensors in a function called as a loss
# (Keras hands them over as floating-point tensors, whatever the signature
# says).
LOSS_PARAMETER_NAMES = frozenset({"y_true", "y_pred"})

# Parameter names that carry Python values (flags, sizes, objects), never a
# likely tensor.
PYTHON_PARAMETER_NAMES = frozenset(
    {
        "self",
        "cls",
        "training",
        "is_training",
        "train",
        "mode",
        "name",
        "verbose",
        "axis",
        "axes",
        "dim",
        "dims",
        "reduction",
        "dtype",
        "shape",
        "batch_size",
        "epochs",
        "config",
        "cfg",
        "params",
        "hparams",
        "args",
        "kwargs",
        "opts",
        "options",
        "model",
        "models",
        "net",
        "network",
        "optimizer",
        "opt",
        "loss_fn",
        "loss_object",
        "metric",
        "metrics",
        "layer",
        "layers",
        "strategy",
        "dataset",
        "ds",
        "callbacks",
        "logger",
        "writer",
        "summary_writer",
        "fn",
        "func",
        "f",
        "mask",
        "seed",
        "rng",
        "generator",
        "env",
        "agent",
        "policy",
        "scope",
        "path",
        "filename",
        "units",
        "size",
    }
)
_PYTHON_NAME_PREFIXES = ("num_", "n_", "is_", "use_", "do_", "has_", "with_", "enable_", "max_")
_PYTHON_NAME_SUFFIXES = (
    "_fn",
    "_func",
    "_size",
    "_dim",
    "_name",
    "_layer",
    "_model",
    "_optimizer",
    "_config",
    "_cfg",
    "_dir",
    "_path",
    "_mode",
    "_type",
    "_shape",
    "_axis",
    "_steps",
    "_epochs",
    "_flag",
)


def is_python_parameter_name(name: str) -> bool:
    """A parameter name that says it holds a Python value (`training`,
    `num_classes`, `loss_fn`, `batch_size`)."""
    return (
        name in PYTHON_PARAMETER_NAMES
        or name.startswith(_PYTHON_NAME_PREFIXES)
        or name.endswith(_PYTHON_NAME_SUFFIXES)
    )


# Names that say an object holds configuration: its attributes are Python
# values (`self.config.expl_noise`, `args.lr`, `FLAGS.batch_size`).
_CONFIG_NAMES = frozenset(
    {"config", "cfg", "conf", "configs", "hparams", "hps", "args", "opts", "options", "flags"}
)


def is_config_name(name: str) -> bool:
    """`config`, `hparams`, `FLAGS`, `train_config`: a configuration object."""
    lowered = name.lower()
    return lowered in _CONFIG_NAMES or lowered.endswith(("_config", "_cfg"))
