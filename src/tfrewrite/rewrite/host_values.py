"""What needs a host value and what accepts a tensor: the tables
`value_uses` reads. Facts about TensorFlow were measured on tensorflow-cpu
2.21 (a tensor bound for `tf.image.random_contrast` raises
`OperatorNotAllowedInGraphError` when traced; int64 indices work in
`tf.gather`; int32 and int64 dimensions both work in `tf.zeros`)."""

from __future__ import annotations

# Builtins that need a Python value: given a symbolic tensor they fail under tracing.
HOST_BUILTINS = frozenset(
    {
        "int",
        "float",
        "bool",
        "complex",
        "round",
        "range",
        "str",
        "list",
        "tuple",
        "sorted",
        "sum",
        "min",
        "max",
        "len",
        "enumerate",
        "zip",
        "iter",
        "next",
        "divmod",
        "hex",
        "oct",
        "chr",
    }
)
# Attributes an array and a tensor share.
SHARED_ATTRIBUTES = frozenset({"shape", "dtype", "ndim"})
# Host libraries: their functions need Python or NumPy values.
HOST_MODULES = ("numpy", "math", "statistics", "random", "scipy")
# NumPy conversions that keep the value as it is (a tensor needs none of them).
NUMPY_WRAPPERS = frozenset(
    {"numpy.asarray", "numpy.array", "numpy.asanyarray", "numpy.ascontiguousarray"}
)
TF_WRAPPERS = frozenset({"tensorflow.constant", "tensorflow.convert_to_tensor"})
# TensorFlow functions that compare some arguments in Python (`if upper <= lower:
# raise`), measured: a tensor there raises `OperatorNotAllowedInGraphError` when traced.
# Value: the arguments that must be Python numbers, by position and name.
TF_PYTHON_NUMBER_ARGS: dict[str, tuple[str, ...]] = {
    "tensorflow.image.random_contrast": ("lower", "upper"),
    "tensorflow.image.random_saturation": ("lower", "upper"),
    "tensorflow.image.random_brightness": ("max_delta",),
    "tensorflow.image.random_hue": ("max_delta",),
    "tensorflow.image.random_jpeg_quality": ("min_jpeg_quality", "max_jpeg_quality"),
}
TF_SIGNATURES: dict[str, tuple[str, ...]] = {
    "tensorflow.image.random_contrast": ("image", "lower", "upper", "seed"),
    "tensorflow.image.random_saturation": ("image", "lower", "upper", "seed"),
    "tensorflow.image.random_brightness": ("image", "max_delta", "seed"),
    "tensorflow.image.random_hue": ("image", "max_delta", "seed"),
    "tensorflow.image.random_jpeg_quality": (
        "image",
        "min_jpeg_quality",
        "max_jpeg_quality",
        "seed",
    ),
}
# Functions whose first argument is a shape: int32 and int64 dimensions both work.
SHAPE_FIRST = frozenset(
    {
        "tensorflow.zeros",
        "tensorflow.ones",
        "tensorflow.fill",
        "tensorflow.random.normal",
        "tensorflow.random.uniform",
        "tensorflow.random.truncated_normal",
    }
)
# Index arguments (position, keyword): int32 and int64 indices both work.
INDEX_ARGUMENTS: dict[str, tuple[int, str]] = {
    "tensorflow.gather": (1, "indices"),
    "tensorflow.gather_nd": (1, "indices"),
}
