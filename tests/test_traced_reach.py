"""Where tracing reaches: a method of an object a traced method holds
(`self.critic.sync()`), a method of a module-level object (`critic.sync()`),
a function a package re-exports (`from .helpers import *` in its
`__init__.py`, then `pkg.f()`). And where it does not: an attribute of an
imported module set once at import (`tf.as_tensor = ...` in another
module) is settled before any trace."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

CRITIC = """
import tensorflow as tf


class Critic(tf.Module):
    def __init__(self):
        self.count = tf.Variable(0, dtype=tf.int64)
        self.mix = tf.Variable(0.0)

    def sync(self):
        if self.count % 4 == 0:
            self.mix.assign(1.0)
        self.count.assign_add(1)
"""


def _check(root: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    options = RunOptions(rule_codes=("TFR101", "TFR201"), root=str(root))
    result = run([InputFile(str(root / name)) for name in files], options, jobs=1)
    return sorted(
        (str(Path(f.path).relative_to(root)), f.start.line, f.code) for f in result.findings
    )


def test_a_method_of_an_object_a_traced_method_holds(tmp_path: Path) -> None:
    agent = """
    import tensorflow as tf

    from critic import Critic


    class Agent(tf.Module):
        def __init__(self):
            self.critic = Critic()

        @tf.function
        def train(self):
            self.critic.sync()
    """
    found = _check(tmp_path, {"critic.py": CRITIC, "agent.py": agent})
    assert found == [("critic.py", 11, "TFR101")]


def test_a_held_object_of_a_method_that_is_not_traced_is_not_traced(tmp_path: Path) -> None:
    agent = """
    import tensorflow as tf

    from critic import Critic


    class Agent(tf.Module):
        def __init__(self):
            self.critic = Critic()

        def train(self):
            self.critic.sync()
    """
    assert _check(tmp_path, {"critic.py": CRITIC, "agent.py": agent}) == []


def test_a_method_of_a_module_level_object(tmp_path: Path) -> None:
    script = CRITIC + textwrap.dedent(
        """

        critic = Critic()


        @tf.function
        def step():
            critic.sync()
        """
    )
    assert _check(tmp_path, {"script.py": script}) == [("script.py", 11, "TFR101")]


def test_a_parameter_shadowing_the_module_level_object(tmp_path: Path) -> None:
    script = CRITIC + textwrap.dedent(
        """

        critic = Critic()


        @tf.function
        def step(critic):
            critic.sync()
        """
    )
    assert _check(tmp_path, {"script.py": script}) == []


def test_a_function_a_package_reexports(tmp_path: Path) -> None:
    helpers = """
    import tensorflow as tf


    def doubled_if_positive(x):
        if tf.reduce_sum(x) > 0:
            x = x * 2
        return x
    """
    main = """
    import tensorflow as tf

    import pkg


    @tf.function
    def step(x):
        return pkg.doubled_if_positive(x)
    """
    files = {
        "pkg/__init__.py": "from .helpers import *\n",
        "pkg/helpers.py": helpers,
        "main.py": main,
    }
    assert _check(tmp_path, files) == [("pkg/helpers.py", 6, "TFR101")]


def test_a_function_a_package_imports_by_name_and_a_sibling_package_calls(
    tmp_path: Path,
) -> None:
    """`pkg/ops/__init__.py` binds `doubled_if_positive` by importing it from
    a private module; a traced method of `pkg/train/` imports it from
    `..ops`: the private module's function runs in that trace. A class
    imported the same way reaches its methods (`ops.Scaler.scale`)."""
    helpers = """
    import tensorflow as tf


    def doubled_if_positive(x):
        if tf.reduce_sum(x) > 0:
            x = x * 2
        return x


    class Scaler:
        @staticmethod
        def scale(x):
            if tf.reduce_max(x) > 1:
                x = x / 2
            return x
    """
    steps = """
    import tensorflow as tf

    from .. import ops
    from ..ops import doubled_if_positive


    class Trainer:
        @tf.function
        def step(self, x):
            return ops.Scaler.scale(doubled_if_positive(x))
    """
    files = {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "from ._doubling import Scaler, doubled_if_positive\n",
        "pkg/ops/_doubling.py": helpers,
        "pkg/train/__init__.py": "",
        "pkg/train/steps.py": steps,
    }
    assert _check(tmp_path, files) == [
        ("pkg/ops/_doubling.py", 6, "TFR101"),
        ("pkg/ops/_doubling.py", 14, "TFR101"),
    ]


def test_an_imported_module_attribute_set_once_at_import_is_settled(tmp_path: Path) -> None:
    patches = """
    import tensorflow as tf

    tf.as_tensor = tf.convert_to_tensor
    """
    agent = """
    import tensorflow as tf

    import patches


    @tf.function
    def act(obs):
        obs = tf.nest.map_structure(tf.as_tensor, obs)
        return obs["x"] * 2.0
    """
    assert _check(tmp_path, {"patches.py": patches, "agent.py": agent}) == []


def test_an_imported_module_attribute_rebound_in_a_function_is_frozen(tmp_path: Path) -> None:
    config = "SCALE = 1.0\n"
    main = """
    import tensorflow as tf

    import config


    def set_scale(value):
        config.SCALE = value


    @tf.function
    def scaled(x):
        return x * config.SCALE
    """
    assert _check(tmp_path, {"config.py": config, "main.py": main}) == [("main.py", 13, "TFR201")]


def test_a_plain_python_object_a_traced_method_holds_is_bookkeeping(tmp_path: Path) -> None:
    """A plain Python class's method (a tracker, a replay buffer) runs once,
    while tracing, by design: it is not checked as traced code."""
    tracker = """
    class Tracker:
        def __init__(self):
            self.locked = False
            self.seen = []

        def lock(self):
            self.locked = True

        def add(self, value):
            if self.locked:
                raise ValueError("locked")
            self.seen.append(value)
    """
    layer = """
    import tensorflow as tf

    from tracker import Tracker


    class Scaled(tf.Module):
        def __init__(self):
            self.tracker = Tracker()

        @tf.function
        def __call__(self, x):
            self.tracker.add(x)
            return x * 2.0
    """
    assert _check(tmp_path, {"tracker.py": tracker, "layer.py": layer}) == []


# A plain Python class whose methods compute on tensors: an augmentation
# pipeline, built where it is used or held by a loader.
AUGMENT = """
import tensorflow as tf


class Augment:
    def darken(self, image):
        if tf.reduce_sum(image) > 2.0:
            image = image * 0.5
        return image

    def log(self, image):
        if tf.reduce_sum(image) > 0.0:
            self.seen = image
"""


def test_a_method_of_an_object_a_traced_function_builds_and_uses(tmp_path: Path) -> None:
    parse = """
    import tensorflow as tf

    from augment import Augment


    def parse(image):
        augmenter = Augment()
        return augmenter.darken(image)


    images = tf.data.Dataset.from_tensor_slices(tf.ones([4, 3])).map(parse)
    """
    found = _check(tmp_path, {"augment.py": AUGMENT, "parse.py": parse})
    assert found == [("augment.py", 7, "TFR101")]


def test_a_local_name_for_a_module_level_object(tmp_path: Path) -> None:
    parse = """
    import tensorflow as tf

    from augment import Augment

    AUGMENTER = Augment()


    @tf.function
    def parse(image):
        augmenter = AUGMENTER
        return augmenter.darken(image)
    """
    found = _check(tmp_path, {"augment.py": AUGMENT, "parse.py": parse})
    assert found == [("augment.py", 7, "TFR101")]


# A loader holding the plain augmenter; its `parse` runs under `Dataset.map`.
LOADER = """

class Loader:
    def __init__(self):
        self.augmenter = Augment()

    def parse(self, image):
        return self.augmenter.darken(image)

    def dataset(self, images):
        return tf.data.Dataset.from_tensor_slices(images).map(self.parse)
"""


def test_a_plain_object_a_traced_method_holds_and_uses_the_result_of(tmp_path: Path) -> None:
    loader = "import tensorflow as tf\n\nfrom augment import Augment\n" + LOADER
    found = _check(tmp_path, {"augment.py": AUGMENT, "loader.py": loader})
    assert found == [("augment.py", 7, "TFR101")]


def test_a_method_called_for_its_effect_on_an_object_built_for_one_call(tmp_path: Path) -> None:
    """Bookkeeping on an object the traced function builds for the call
    (`log` keeps what it saw): not checked as traced code."""
    parse = """
    import tensorflow as tf

    from augment import Augment


    @tf.function
    def parse(image):
        augmenter = Augment()
        augmenter.log(image)
        return image * 2.0
    """
    assert _check(tmp_path, {"augment.py": AUGMENT, "parse.py": parse}) == []


WAITER = """
import tensorflow as tf


class Counter(tf.Module):
    def __init__(self):
        self.count = tf.Variable(0, dtype=tf.int64)


store = Counter()


@tf.function
def wait():
    store.count.assign_add(1)
    if store.count >= 3:
        tf.print("full")
        return store.count.read_value() * 10
    return store.count.read_value()
"""


def test_a_variable_a_module_level_object_holds_is_a_tensor(tmp_path: Path) -> None:
    """`store.count`, the variable `Counter.__init__` makes on the module's
    `store = Counter()`, is a scalar tensor in a traced function's test."""
    assert _check(tmp_path, {"waiter.py": WAITER}) == [("waiter.py", 16, "TFR101")]


def test_a_parameter_shadowing_the_object_holding_a_variable(tmp_path: Path) -> None:
    waiter = WAITER.replace("def wait():", "def wait(store):")
    assert _check(tmp_path, {"waiter.py": waiter}) == []


def test_a_step_defined_in_the_main_block_reaches_its_callees(tmp_path: Path) -> None:
    """A train step defined under `if __name__ == "__main__":` is the
    module's own function: the loop there calling it makes it a step that
    will be traced, and what it reaches in another module is checked as
    traced code in the same run: `scale`'s `.numpy()`, which no fix
    rewrites, withholds the step's decoration, and the finding says why."""
    helpers = """
    import tensorflow as tf


    def scale(x):
        return x * float(tf.reduce_max(x).numpy())
    """
    script = """
    import tensorflow as tf

    from helpers import scale

    if __name__ == "__main__":
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.SGD(0.1)

        def train_step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(scale(x), training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

        for _ in range(3):
            train_step(tf.ones((2, 3)))
    """
    for name, text in {"helpers.py": helpers, "script.py": script}.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    options = RunOptions(rule_codes=("TFR105", "TFR302"), root=str(tmp_path))
    files = [InputFile(str(tmp_path / name)) for name in ("helpers.py", "script.py")]
    findings = run(files, options, jobs=1).findings
    assert [(Path(f.path).name, f.code) for f in findings] == [("script.py", "TFR302")]
    assert findings[0].fix is None
    assert "in `scale` (" in findings[0].message
    assert "helpers.py:6): TFR105" in findings[0].message


def test_names_two_modules_import_from_each_other_resolve_to_nothing(tmp_path: Path) -> None:
    """`a` imports `f` from `b` and `b` from `a`: neither defines it, and the
    lookup ends (no finding, no error)."""
    step = """
    import tensorflow as tf

    from pkg.a import f


    @tf.function
    def step(x):
        return f(x)
    """
    files = {
        "pkg/__init__.py": "from .a import *\nfrom .b import *\n",
        "pkg/a.py": "from pkg.b import f\n",
        "pkg/b.py": "from pkg.a import f\n",
        "main.py": step,
    }
    assert _check(tmp_path, files) == []
