"""Python handed to `tf.py_function` / `tf.numpy_function` runs eagerly,
whatever traces the code around it: no finding about traced code inside
it (a nested function, a lambda, what they call), while the traced code
around it is still checked. And a project package that re-exports
TensorFlow (`from pkg import tf`) is TensorFlow to the files importing it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

NESTED = """
import numpy as np
import tensorflow as tf

POOLS = {"a": [1, 2, 3, 4], "b": [5, 6, 7, 8]}


def pick(key):
    def draw(k):
        members = POOLS[k.numpy().decode("utf-8")]
        return np.random.choice(members, size=2, replace=False)

    return tf.py_function(draw, inp=[key], Tout=tf.int64)


picked = tf.data.Dataset.from_tensor_slices(sorted(POOLS)).map(pick)
"""

LAMBDA = """
import numpy as np
import tensorflow as tf


def read(path):
    return tf.constant(len(path), tf.int64)


def load(path):
    size = tf.numpy_function(lambda p: read(p).numpy(), inp=[path], Tout=tf.int64)
    return size + np.random.randint(10)


loaded = tf.data.Dataset.from_tensor_slices([b"a", b"bb"]).map(load)
"""


def _found(root: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    options = RunOptions(rule_codes=("TFR101", "TFR102", "TFR105"), root=str(root))
    result = run([InputFile(str(root / name)) for name in files], options, jobs=1)
    return sorted(
        (str(Path(f.path).relative_to(root)), f.start.line, f.code) for f in result.findings
    )


def test_a_nested_function_handed_to_py_function_is_eager(tmp_path: Path) -> None:
    assert _found(tmp_path, {"pick.py": NESTED}) == []


def test_the_same_function_called_directly_is_traced(tmp_path: Path) -> None:
    source = NESTED.replace(
        "return tf.py_function(draw, inp=[key], Tout=tf.int64)", "return draw(key)"
    )
    assert _found(tmp_path, {"pick.py": source}) == [
        ("pick.py", 10, "TFR105"),
        ("pick.py", 11, "TFR102"),
    ]


def test_a_lambda_handed_to_numpy_function_is_eager_the_code_around_is_not(
    tmp_path: Path,
) -> None:
    # `.numpy()` in the lambda runs eagerly; the draw beside the call is traced.
    assert _found(tmp_path, {"load.py": LAMBDA}) == [("load.py", 12, "TFR102")]


def test_tensorflow_re_exported_by_a_project_package(tmp_path: Path) -> None:
    package = """
    import tensorflow as tf
    """
    step = """
    from kit import tf


    @tf.function
    def clipped(x):
        if tf.reduce_sum(x) > 1.0:
            x = x / tf.reduce_sum(x)
        return x
    """
    found = _found(tmp_path, {"kit/__init__.py": package, "step.py": step})
    assert found == [("step.py", 7, "TFR101")]


SIBLING = """
import numpy as np
import tensorflow as tf


def serialize(key):
    def as_bytes(value):
        return value.numpy()

    def encode(k):
        return as_bytes(k) + bytes(np.random.randint(2))

    return tf.py_function(encode, inp=[key], Tout=tf.string)


encoded = tf.data.Dataset.from_tensor_slices([b"a", b"b"]).map(serialize)
"""


def test_a_helper_only_the_eager_function_calls_is_eager(tmp_path: Path) -> None:
    assert _found(tmp_path, {"encode.py": SIBLING}) == []


def test_the_same_helper_called_by_the_traced_function_is_traced(tmp_path: Path) -> None:
    source = SIBLING.replace(
        "    return tf.py_function(encode, inp=[key], Tout=tf.string)",
        "    as_bytes(key)\n    return tf.py_function(encode, inp=[key], Tout=tf.string)",
    )
    assert _found(tmp_path, {"encode.py": source}) == [("encode.py", 8, "TFR105")]


def test_a_function_handed_to_py_function_in_a_function_another_module_traces(
    tmp_path: Path,
) -> None:
    """`share` runs traced because a step of another module calls it; the
    function it nests and hands `tf.py_function` still runs eagerly, also
    where the traced helper its result goes to names its parameter alike."""
    helpers = """
    import numpy as np
    import tensorflow as tf

    from kit.utils import hosts


    def unflatten_into(x, params):
        sizes = [int(np.prod(p.shape.as_list())) for p in params]
        pieces = tf.split(x, sizes)
        updated = [tf.reshape(q, p.shape) for p, q in zip(params, pieces)]
        return tf.group([p.assign(q) for p, q in zip(params, updated)])


    def share(params):
        def _publish(x):
            weights = x.numpy()
            hosts.send(weights)
            return weights

        flat = tf.concat([tf.reshape(p, (-1,)) for p in params], axis=0)
        return unflatten_into(tf.py_function(_publish, [flat], tf.float32), params)
    """
    hosts = """
    def send(values):
        return values
    """
    algo = """
    import tensorflow as tf

    from kit.utils import helpers


    def train(critic):
        helpers.share(critic.variables)

        @tf.function
        def step(x):
            helpers.share(critic.variables)
            return x

        return step(1.0)
    """
    files = {"kit/__init__.py": "", "kit/utils/helpers.py": helpers, "kit/utils/hosts.py": hosts}
    assert _found(tmp_path, {**files, "kit/algo.py": algo}) == []
