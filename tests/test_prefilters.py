"""Pass-1 prefilters: a rule's `applies_to` lets a file skip the LibCST parse
only when the rule has nothing to find there. For each prefilter, a file it
must keep is still checked (and reported), and a file it may skip is skipped."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tfrewrite.api import check_source
from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.pipeline.engine import InputFile, RunOptions, run
from tfrewrite.rules import RULES_BY_CODE


def _admitted(source: str, code: str) -> bool:
    """Whether the rule's prefilter keeps this file (pass-1 facts alone)."""
    index = build_index(textwrap.dedent(source), "example.py", "example")
    traced = compute_facts([index]).for_path("example.py")
    return RULES_BY_CODE[code].applies_to(index, traced)


def _reported_lines(source: str, code: str) -> list[int]:
    return [f.start.line for f in check_source(textwrap.dedent(source), select=[code])]


# Files each prefilter must keep: the rule reports something in every one.
KEPT = {
    "TFR101: a condition on a `self` attribute assigned a variable later in the file": (
        "TFR101",
        """
        import tensorflow as tf

        class Gate(tf.keras.layers.Layer):
            def call(self, x):
                if self.threshold > 0.5:
                    return x * 2.0
                return x

            def build(self, shape):
                self.threshold = tf.Variable(0.7)
        """,
    ),
    "TFR101: a `while` on a tensor": (
        "TFR101",
        """
        import tensorflow as tf

        @tf.function
        def f(x):
            while tf.reduce_sum(x) > 1.0:
                x = x / 2.0
            return x
        """,
    ),
    "TFR101: a Python test `and` a tensor test": (
        "TFR101",
        """
        import tensorflow as tf

        @tf.function
        def f(x, training=False):
            m = tf.reduce_mean(x)
            if x is not None and m > 0.0:
                return x * 2.0
            return x
        """,
    ),
    "TFR101: a tensor tested for membership in a literal tuple": (
        "TFR101",
        """
        import tensorflow as tf

        @tf.function
        def f(x):
            m = tf.reduce_max(x)
            if m in (0.0, 1.0):
                return x
            return x * 2.0
        """,
    ),
    "TFR306: `np.mean` of a list appended per batch": (
        "TFR306",
        """
        import numpy as np

        def evaluate(model, test_batches):
            accs = []
            for x, y in test_batches:
                accs.append(model.evaluate(x, y))
            return np.mean(accs)
        """,
    ),
    "TFR306: the list given by keyword": (
        "TFR306",
        """
        import numpy as np

        def evaluate(model, test_batches):
            accs = []
            for x, y in test_batches:
                accs.append(model.evaluate(x, y))
            return np.mean(a=accs)
        """,
    ),
    "TFR306: `sum(...) / len(...)`": (
        "TFR306",
        """
        def evaluate(model, test_batches):
            accs = []
            for x, y in test_batches:
                accs.append(model.evaluate(x, y))
            return sum(accs) / len(accs)
        """,
    ),
    "TFR306: a running sum divided by the number of batches": (
        "TFR306",
        """
        def evaluate(model, test_batches):
            total = 0.0
            n_batches = 0
            for x, y in test_batches:
                total += model.evaluate(x, y)
                n_batches += 1
            return total / n_batches
        """,
    ),
    "TFR306: the mean of a generator over batches": (
        "TFR306",
        """
        import statistics

        def evaluate(model, loader):
            return statistics.mean(model.evaluate(x, y) for x, y in loader)
        """,
    ),
    "TFR102: a module-level generator drawn from in traced code": (
        "TFR102",
        """
        import numpy as np
        import tensorflow as tf

        rng = np.random.default_rng(0)

        @tf.function
        def noisy(x):
            return x + rng.normal()
        """,
    ),
    "TFR102: a draw in the default of a function nested in traced code": (
        "TFR102",
        """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def noisy(x):
            def add(v, noise=np.random.normal()):
                return v + noise
            return add(x)
        """,
    ),
    "TFR106: a draw in a function nested in traced code": (
        "TFR106",
        """
        import random
        import tensorflow as tf

        @tf.function
        def noisy(x):
            def add(v):
                return v + random.random()
            return add(x)
        """,
    ),
    "TFR104: NumPy in a function nested in traced code": (
        "TFR104",
        """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def f(x):
            def g(v):
                t = tf.constant(v)
                return np.square(t)
            return g(x)
        """,
    ),
    "TFR104: builtin `max` on tensors, NumPy not imported": (
        "TFR104",
        """
        import tensorflow as tf

        @tf.function
        def f(x, y):
            return max(tf.reduce_sum(x), tf.reduce_sum(y))
        """,
    ),
    "TFR201: a class attribute rebound through the class name, read in traced code": (
        "TFR201",
        """
        import tensorflow as tf

        class Schedule:
            margin = 1.0

        @tf.function
        def loss(y_true, y_pred):
            return tf.reduce_mean(y_pred - y_true) * Schedule.margin

        def train(batches):
            for epoch in range(10):
                Schedule.margin = epoch / 10
                for x, y in batches:
                    loss(y, x)
        """,
    ),
    "TFR201: another module's attribute rebound here, read in traced code": (
        "TFR201",
        """
        import tensorflow as tf
        import config as cfg

        @tf.function
        def loss(y_true, y_pred):
            return tf.reduce_mean(y_pred - y_true) * cfg.SCALE

        def train(batches):
            for epoch in range(10):
                cfg.SCALE = epoch / 10
                for x, y in batches:
                    loss(y, x)
        """,
    ),
    "TFR101: a `training` flag an `input_signature` makes a tensor": (
        "TFR101",
        """
        import tensorflow as tf

        @tf.function(
            input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.bool)]
        )
        def f(x, training=False):
            if training:
                x = x * 0.5
            return x
        """,
    ),
    "TFR101: a local bound to a TensorFlow result": (
        "TFR101",
        """
        import tensorflow as tf

        @tf.function
        def f(x):
            total = tf.reduce_sum(x)
            big = total > 1.0
            if big:
                x = x / 2.0
            return x
        """,
    ),
    "TFR101: a function imported from TensorFlow by name": (
        "TFR101",
        """
        import tensorflow as tf
        from tensorflow import reduce_sum

        @tf.function
        def f(x):
            if reduce_sum(x) > 1.0:
                x = x / 2.0
            return x
        """,
    ),
    "TFR101: a parameter with no default rebound from itself": (
        "TFR101",
        """
        import tensorflow as tf

        @tf.function
        def f(x, scale=2.0):
            x = x * scale
            if x > 1.0:
                x = x / 2.0
            return x
        """,
    ),
    "TFR101: a conditional expression in a lambda `Dataset.map` traces": (
        "TFR101",
        """
        import tensorflow as tf

        ds = tf.data.Dataset.range(10).map(lambda x: x * 2 if x > 3 else x)
        """,
    ),
    "TFR201: a traced method reads an attribute another method rebinds": (
        "TFR201",
        """
        import tensorflow as tf

        class Scaled(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.scale = 1.0

            def anneal(self):
                self.scale *= 0.5

            def call(self, x):
                return x * self.scale
        """,
    ),
    "TFR202: a list of the module appended to": (
        "TFR202",
        """
        import tensorflow as tf

        history = []

        @tf.function
        def f(x):
            history.append(x)
            return x
        """,
    ),
    "TFR202: a `self` list appended to": (
        "TFR202",
        """
        import tensorflow as tf

        class Model(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.seen = []

            def call(self, x):
                self.seen.append(x)
                return x
        """,
    ),
    "TFR202: a list of the function's own grown in a `tf.range` loop": (
        "TFR202",
        """
        import tensorflow as tf

        @tf.function
        def f(x, n):
            parts = []
            for i in tf.range(n):
                parts.append(x * tf.cast(i, tf.float32))
            return parts
        """,
    ),
}

# Files each prefilter may skip: nothing there for the rule.
SKIPPED = {
    "TFR101: only Python conditions (`is`, `isinstance`, `self` flags, literals)": (
        "TFR101",
        """
        import tensorflow as tf

        class Gate(tf.keras.layers.Layer):
            def call(self, x, mask=None):
                if self.flag and mask is not None and not isinstance(x, list):
                    return x * 2.0
                if self.mode == "fast" or self.rate > 0:
                    return x
                if x.shape[-1] == 1 and len(x.shape) > 2 and self.layer.built:
                    return x
                return x if self.kernel.shape[0] in self.sizes else -x

            def build(self, shape):
                self.flag = True
                self.rate = 0.5
                self.kernel = self.add_weight(shape)  # read only through `.shape`
        """,
    ),
    "TFR306: averages of attributes, sums not divided": (
        "TFR306",
        """
        import numpy as np

        def summary(history, xs):
            total = sum(xs)
            return np.mean(history.losses, axis=0), total
        """,
    ),
    "TFR102: NumPy imported, no `numpy.random` call": (
        "TFR102",
        """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def f(x):
            return x + 1.0

        def host(a):
            return np.asarray(a)
        """,
    ),
    "TFR104: NumPy only outside traced code": (
        "TFR104",
        """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def f(x):
            return x + 1.0

        def host(a):
            return np.square(a)
        """,
    ),
    "TFR201: another module's attribute read in traced code, written only on an argument": (
        "TFR201",
        """
        import tensorflow as tf
        import config as cfg

        @tf.function
        def loss(y_true, y_pred):
            return tf.reduce_mean(y_pred - y_true) * cfg.SCALE

        def train(batches, options):
            for epoch in range(10):
                options.margin = epoch / 10  # an argument's attribute, not a class's
                for x, y in batches:
                    loss(y, x)
        """,
    ),
    "TFR101: conditions on flags, sizes and helpers of the project": (
        "TFR101",
        """
        import tensorflow as tf
        from mypackage import tree
        from mypackage.dtypes import standardize_dtype

        class Block(tf.keras.layers.Layer):
            def call(self, x, training=False, data_format="channels_last"):
                rank = len(x.shape)
                causal = training and self.dropout > 0
                if causal and rank == 2:
                    x = x * 0.5
                if data_format == "channels_first" or tree.is_nested(x):
                    return x
                if standardize_dtype(x.dtype) == "float16" and str(self.name).lower() != "":
                    return x
                return x if max(self.strides) > 1 else -x

            def build(self, shape):
                self.strides = tuple(shape)
                self.dropout = 0.5
        """,
    ),
    "TFR101: traced lambdas without a conditional expression": (
        "TFR101",
        """
        import tensorflow as tf

        ds = tf.data.Dataset.range(10).map(lambda x: x * 2)

        def build(model):
            model.compile(loss=lambda y_true, y_pred: tf.reduce_mean(y_pred - y_true))
        """,
    ),
    "TFR201: a class rebinds attributes its traced method never reads": (
        "TFR201",
        """
        import tensorflow as tf

        class Scaled(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.scale = 1.0
                self.lora_enabled = False

            def enable_lora(self):
                self.lora_enabled = True

            def call(self, x):
                return x * self.scale
        """,
    ),
    "TFR202: lists of the function's own, outside graph loops; modules' functions": (
        "TFR202",
        """
        import tensorflow as tf
        from mypackage import ops

        @tf.function
        def f(xs):
            parts = []
            for x in xs:
                parts.append(ops.add(x, 1.0))
            seen = set()
            seen.add(len(parts))
            return tf.stack(parts)
        """,
    ),
}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_prefilter_keeps_a_file_with_findings(name: str) -> None:
    code, source = KEPT[name]
    assert _admitted(source, code)
    assert _reported_lines(source, code)


@pytest.mark.parametrize("name", sorted(SKIPPED))
def test_prefilter_skips_a_file_without_findings(name: str) -> None:
    code, source = SKIPPED[name]
    assert not _admitted(source, code)
    assert _found_without_prefilter(source, code) == 0


def _found_without_prefilter(source: str, code: str) -> int:
    """How many violations the rule finds when it runs despite its prefilter."""
    import libcst as cst

    from tfrewrite.facts.context import RuleContext

    source = textwrap.dedent(source)
    index = build_index(source, "example.py", "example")
    traced = compute_facts([index]).for_path("example.py")
    ctx = RuleContext("example.py", cst.parse_module(source), index, traced, {})
    return sum(1 for _ in RULES_BY_CODE[code].check(ctx))


# Projects: the TFR201 facts that come from other modules (`rebound_imports`,
# filled by `compute_facts`) keep the module that reads the rebound name in
# traced code; the module that writes it has nothing to report.
CONFIG_READER = """
    import tensorflow as tf
    import config as cfg

    @tf.function
    def loss(y_true, y_pred):
        return tf.reduce_mean(y_pred - y_true) * cfg.SCALE
"""
PROJECTS = {
    "another module writes `config.SCALE` in its training loop": {
        "config.py": "SCALE = 1.0\n",
        "model.py": CONFIG_READER,
        "train.py": """
            import tensorflow as tf
            import config
            from model import loss

            def train(batches):
                for epoch in range(10):
                    config.SCALE = epoch / 10
                    for x, y in batches:
                        loss(y, x)
        """,
    },
    "the config module rebinds `SCALE` in a function (`global`)": {
        "config.py": """
            SCALE = 1.0

            def anneal(epoch):
                global SCALE
                SCALE = 1.0 / (epoch + 1)
        """,
        "model.py": CONFIG_READER,
    },
}


def _project_admitted(files: dict[str, str], path: str, code: str) -> tuple[bool, int]:
    """Whether the rule's prefilter keeps `path` of a project (pass-1 facts of
    every module), and how many violations the rule finds there regardless."""
    import libcst as cst

    from tfrewrite.facts.context import RuleContext

    sources = {name: textwrap.dedent(text) for name, text in files.items()}
    indexes = {
        name: build_index(source, name, name.removesuffix(".py"))
        for name, source in sources.items()
    }
    facts = compute_facts(list(indexes.values()))
    index, traced = indexes[path], facts.for_path(path)
    ctx = RuleContext(path, cst.parse_module(sources[path]), index, traced, {})
    found = sum(1 for _ in RULES_BY_CODE[code].check(ctx))
    return RULES_BY_CODE[code].applies_to(index, set(traced)), found


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_tfr201_prefilter_keeps_a_read_another_module_rebinds(name: str) -> None:
    files = PROJECTS[name]
    assert _project_admitted(files, "model.py", "TFR201") == (True, 1)


def test_tfr201_prefilter_skips_a_read_of_a_name_set_once_at_import() -> None:
    files = {"config.py": "SCALE = 1.0\nSCALE = 2.0\n", "model.py": CONFIG_READER}
    assert _project_admitted(files, "model.py", "TFR201") == (False, 0)


def test_a_script_without_tensorflow_that_rebinds_an_imported_name_is_indexed(
    tmp_path: Path,
) -> None:
    """`main.py` imports no TensorFlow, yet its loop rebinds `config.SCALE`,
    which `model.py` reads in traced code: frozen at the first trace."""
    files = {
        "config.py": "SCALE = 1.0\n",
        "model.py": CONFIG_READER,
        "main.py": """
            import config
            from model import loss

            for epoch in range(10):
                config.SCALE = epoch / 10
                print(loss(1.0, 2.0))
        """,
    }
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    inputs = [InputFile(str(p)) for p in sorted(tmp_path.glob("*.py"))]
    result = run(inputs, RunOptions(rule_codes=("TFR201",), root=str(tmp_path)), jobs=1)
    assert [(Path(f.path).name, f.start.line) for f in result.findings] == [("model.py", 7)]


AGENT = """
import tensorflow as tf


class Agent:
    def __init__(self, model):
        self.model = model
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

    def step(self, batch, iteration=0):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(batch["x"], training=True) - batch["y"]))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss
"""


def test_a_script_without_tensorflow_that_calls_a_step_method_is_indexed(tmp_path: Path) -> None:
    """`process.py` neither names TensorFlow nor imports the agent's module:
    its loop calls `agent.step(...)` on the agent it is handed. It is
    indexed, so the step is known to run per batch, eagerly."""
    (tmp_path / "nets").mkdir()
    (tmp_path / "nets" / "agent.py").write_text(AGENT)
    (tmp_path / "process.py").write_text(
        textwrap.dedent(
            """
            import numpy as np


            def training(agent, dataset, epochs):
                for epoch in range(epochs):
                    while True:
                        batch = dataset.next_batch()
                        if batch["x"].shape[0] == 0:
                            break
                        agent.step(batch=batch, iteration=epoch)
            """
        )
    )
    (tmp_path / "unrelated.py").write_text("import numpy as np\n\nprint(np.ones(3).sum())\n")
    inputs = [InputFile(str(p)) for p in sorted(tmp_path.rglob("*.py"))]
    result = run(inputs, RunOptions(rule_codes=("TFR302",), root=str(tmp_path)), jobs=1)
    assert [(Path(f.path).name, f.start.line) for f in result.findings] == [("agent.py", 10)]
    assert result.indexed == 2  # the unrelated script stays unparsed


@pytest.mark.parametrize(
    ("text", "assigns"),
    [
        ("cfg.SCALE = 0.5\n", True),
        ("cfg.SCALE += 0.5\n", True),
        ("cfg.SCALE=0.5\n", True),
        ("if cfg.SCALE == 0.5:\n    pass\n", False),
        ("cfg.SCALE_MAX = 0.5\n", False),
        ("x = cfg.SCALE\n", False),
        ("print(.SCALE)\n", False),
    ],
)
def test_the_byte_test_for_an_attribute_assignment(text: str, assigns: bool) -> None:
    from tfrewrite.facts.prefilters import assigns_an_attribute

    assert assigns_an_attribute(text.encode(), {"SCALE"}) is assigns


@pytest.mark.parametrize("method", ["append", "setdefault", "discard", "popitem"])
def test_a_module_container_mutated_in_traced_code_is_reported(method: str) -> None:
    args = {"append": "x", "setdefault": '"k", x', "discard": "x", "popitem": ""}[method]
    container = "[]" if method == "append" else ("set()" if method == "discard" else "{}")
    source = f"""
        import tensorflow as tf

        seen = {container}

        @tf.function
        def f(x):
            seen.{method}({args})
            return x
    """
    assert _admitted(source, "TFR202")
    assert _reported_lines(source, "TFR202") == [8]


def test_every_rule_has_a_pass_1_scope() -> None:
    """A rule without a pre-parse check in its registry entry would make
    every file parsed; each of today's rules has one."""
    from tfrewrite.rules import rule_specs

    assert [spec.code for spec in rule_specs() if spec.scope is None] == []


def test_settling_files_no_rule_can_fire_in_loads_no_libcst(tmp_path: Path) -> None:
    """The main process decides from pass-1 facts alone: a run whose files
    no rule can fire in (an edit to one such file, with the rest cached)
    never imports LibCST or a rule module."""
    import subprocess
    import sys

    (tmp_path / "model.py").write_text(
        textwrap.dedent(
            """
            import tensorflow as tf

            def scale(x):
                if x.shape.rank == 2:
                    print(x)
                return x * 2.0

            def loader(n):
                return tf.data.Dataset.range(n).batch(4)
            """
        )
    )
    script = textwrap.dedent(
        f"""
        import sys
        from tfrewrite.pipeline.engine import InputFile, RunOptions, run
        from tfrewrite.rules import RULE_CODES
        result = run(
            [InputFile({str(tmp_path / "model.py")!r})],
            RunOptions(rule_codes=RULE_CODES, root={str(tmp_path)!r}),
            jobs=1,
        )
        from tfrewrite.rules import RULE_MODULES
        # The registry and the families' pre-parse checks load; no rule does.
        loaded = sorted(
            m
            for m in sys.modules
            if m.startswith("libcst") or m in RULE_MODULES or m == "tfrewrite.rules.base"
        )
        print(result.parsed, len(result.findings), loaded)
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "0 0 []"
