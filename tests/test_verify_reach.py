"""How verify reaches code in real projects, without TensorFlow: packages and
import roots, missing packages, and input signatures read from how each
parameter is used."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import pytest

from tfrewrite.verify import loader, module_slice, project_imports, signatures
from tfrewrite.verify.inputs import TensorSpec, ValueSpec
from tfrewrite.verify.targets import loss_shaped, synthesisable


def _usages(source: str, qualname: str) -> dict[str, signatures.Usage]:
    tree = ast.parse(textwrap.dedent(source))
    return signatures.analyse(tree, module_slice.find_definition(tree, qualname), "." in qualname)


def _first(source: str, qualname: str) -> dict:
    return next(signatures.candidates(_usages(source, qualname)))[1]


# -- where a file is imported from ---------------------------------------------------------


def test_package_of_a_file_inside_packages(tmp_path: Path) -> None:
    inner = tmp_path / "repo" / "tensorflow_addons" / "losses"
    inner.mkdir(parents=True)
    (inner.parent / "__init__.py").write_text("")
    (inner / "__init__.py").write_text("")
    (inner / "focal_loss.py").write_text("")
    assert project_imports.package_of(str(inner / "focal_loss.py")) == (
        "tensorflow_addons.losses",
        str(tmp_path / "repo"),
    )
    (tmp_path / "script.py").write_text("")
    assert project_imports.package_of(str(tmp_path / "script.py")) == (None, str(tmp_path))


def test_import_roots_find_the_repository_top(tmp_path: Path) -> None:
    # yolov3/yolov4.py imports yolov3.utils; yolov3/yolov3.py would shadow the folder.
    folder = tmp_path / "yolov3"
    folder.mkdir()
    (folder / "yolov3.py").write_text("")
    (folder / "utils.py").write_text("")
    source = "from yolov3.utils import x\nimport core\nimport numpy\n"
    (tmp_path / "core").mkdir()
    before, after = project_imports.import_roots(str(folder / "yolov4.py"), source)
    assert before == [str(tmp_path)] and after == []
    before, after = project_imports.import_roots(str(folder / "yolov4.py"), "import core\n")
    assert before == [] and after == [str(tmp_path)]


def test_an_example_finds_the_package_of_the_src_layout(tmp_path: Path) -> None:
    # examples/train.py imports `graphs`, which lives in src/graphs (not installed).
    (tmp_path / "src" / "graphs").mkdir(parents=True)
    (tmp_path / "src" / "graphs" / "__init__.py").write_text("")
    (tmp_path / "examples").mkdir()
    source = "from graphs.layers import Conv\nimport numpy\n"
    before, after = project_imports.import_roots(str(tmp_path / "examples" / "train.py"), source)
    assert before == [] and after == [str(tmp_path / "src")]


def test_a_missing_import_is_a_package_unless_the_project_has_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "helpers").mkdir()
    project_imports.enter_project([str(tmp_path)])
    try:
        with pytest.raises(project_imports.MissingPackage) as err:
            loader.load_function(
                "import tfrewrite_absent_pkg\n\n"
                "def f(a, b):\n    return tfrewrite_absent_pkg.g(a)\n",
                "f",
                "original",
            )
        assert err.value.name == "tfrewrite_absent_pkg"
        assert "pip install tfrewrite-absent-pkg" in str(err.value)
        assert (
            project_imports.missing and project_imports.missing[-1].name == "tfrewrite_absent_pkg"
        )
        # `helpers` is the project's own folder: its missing module is the project's error.
        with pytest.raises(
            project_imports.LoadError, match="own module `helpers.absent`"
        ) as project_err:
            loader.load_function(
                "import helpers.absent\n\ndef f(a, b):\n    return helpers.g(a)\n", "f", "original"
            )
        assert not isinstance(project_err.value, project_imports.MissingPackage)
        with pytest.raises(project_imports.LoadError, match="has no `__init__.py`"):
            loader.load_function(
                "from .sibling import g\n\ndef f(a, b):\n    return g(a)\n", "f", "original"
            )
    finally:
        project_imports.enter_project([])


def test_entering_another_project_forgets_its_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    for repo, value in (("a", 1), ("b", 2)):
        (tmp_path / repo).mkdir()
        (tmp_path / repo / "project_shared_utils.py").write_text(f"VALUE = {value}\n")
    try:
        project_imports.enter_project([str(tmp_path / "a")])
        import project_shared_utils  # type: ignore[import-not-found]

        assert project_shared_utils.VALUE == 1
        project_imports.enter_project([str(tmp_path / "b")])
        assert "project_shared_utils" not in sys.modules
        import project_shared_utils as again  # type: ignore[import-not-found]

        assert again.VALUE == 2
    finally:
        project_imports.enter_project([])
        sys.modules.pop("project_shared_utils", None)


def test_a_class_defined_inside_a_function_is_unreachable() -> None:
    source = "def build():\n    class Model:\n        def call(self, x):\n            return x\n"
    with pytest.raises(loader.Unreachable, match="defined inside the function `build`"):
        loader.load_function(source, "build.Model.call", "original")


# -- input signatures ---------------------------------------------------------------------


def test_sparse_labels_are_integers_of_lower_rank() -> None:
    specs = _first(
        """
        def compute_loss(logits, labels):
            return tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=labels))
        """,
        "compute_loss",
    )
    assert specs["labels"] == TensorSpec("int32", (8,), 0, 3, strict=True)
    assert specs["logits"].shape == (8, 4) and specs["logits"].dtype == "float32"


def test_labels_compared_with_an_argmax_are_int64() -> None:
    usages = _usages(
        """
        def accuracy(logits, labels):
            predictions = tf.argmax(logits, axis=1)
            return tf.reduce_mean(tf.cast(tf.equal(predictions, labels), tf.float32))
        """,
        "accuracy",
    )
    assert usages["labels"].int64 and usages["logits"].min_rank == 2


def test_indices_and_image_ops_are_followed_into_helpers() -> None:
    source = """
        def crop(image):
            return tf.image.random_crop(image, size=[8, 8, 3])

        def pick(table, ids):
            return tf.gather(table, ids)

        def augment(image, table, ids):
            return crop(image), pick(table, ids)
        """
    usages = _usages(source, "augment")
    assert usages["image"].image and usages["ids"].integer and not usages["table"].integer
    labels = [label for label, _ in signatures.candidates(usages)]
    assert labels[:2] == ["hinted", "unbatched image"]


def test_sizes_in_shape_lists_and_by_name_are_numbers() -> None:
    specs = _first(
        "def get_random_z(z_dim, batch_size):\n"
        "    return tf.random.uniform([batch_size, z_dim], minval=-1, maxval=1)\n",
        "get_random_z",
    )
    assert specs == {"z_dim": ValueSpec(4), "batch_size": ValueSpec(4)}
    usages = _usages(
        "def center_crop(image, size):\n"
        "    return tf.image.crop_to_bounding_box(image, 0, 0, size[0], size[1])\n",
        "center_crop",
    )
    found = dict(signatures.candidates(usages))
    # Read by index: a (height, width) pair of sizes.
    assert found["sizes by name"]["size"] == ValueSpec((16, 16))


def test_reshape_targets_and_ranks_shape_the_candidates() -> None:
    specs = _first(
        "def classify(images, y):\n"
        "    x = tf.reshape(images, [-1, 28, 28, 1])\n"
        "    return tf.reduce_sum(y, axis=2)\n",
        "classify",
    )
    assert specs["images"].shape == (8, 28, 28, 1) and specs["y"].shape == (8, 4, 4)


def test_reductions_over_several_axes_of_an_elementwise_product_need_their_rank() -> None:
    # A volumetric Dice loss: `axis=[1, 2, 3, 4]` on `pred * mask` needs both
    # of rank 5 (the default rank 2 raises "Invalid reduction dimension").
    specs = _first(
        "def dice(pred, mask):\n"
        "    overlap = tf.reduce_sum(pred * mask, axis=[1, 2, 3, 4])\n"
        "    return overlap / (tf.reduce_sum(tf.abs(pred), axis=(-1, -2)) + 1e-6)\n",
        "dice",
    )
    assert specs["pred"].shape == (8, 4, 4, 4, 4) and specs["mask"].shape == (8, 4, 4, 4, 4)


def test_a_size_read_by_index_is_a_tuple_of_sizes() -> None:
    # `desired_size[0] / desired_size[1]`: a (height, width) pair, not a
    # tensor and not one number.
    source = (
        "def resize_with_pad(image, desired_size):\n"
        "    ratio = desired_size[0] / desired_size[1]\n"
        "    return tf.image.resize(image, (desired_size[0], int(desired_size[1] * ratio)))\n"
    )
    found = dict(signatures.candidates(_usages(source, "resize_with_pad")))
    assert found["sizes by name"]["desired_size"].value == (16, 16)


def test_objects_are_blockers_with_their_reason() -> None:
    source = """
        def predict(model, x):
            return model(x)

        def fit(config, data):
            return data.take(config.steps)
        """
    assert signatures.blockers(_usages(source, "predict")) == [
        "`model` is called (a model or a function)"
    ]
    assert not loss_shaped(textwrap.dedent(source), "predict")
    assert not synthesisable(textwrap.dedent(source), "fit")
    assert synthesisable("def scale(x, factor, offset):\n    return x * factor\n", "scale")


def test_candidates_are_distinct_and_bounded() -> None:
    usages = _usages("def f(a, b, c):\n    return a + b + c\n", "f")
    found = [specs for _, specs in signatures.candidates(usages)]
    assert len(found) == len({repr(sorted(s.items())) for s in found})
    assert found[0] == {n: TensorSpec("float32", (8, 4), 0.0, 1.0, strict=False) for n in "abc"}


def test_a_class_whose_constructor_takes_sizes_is_built_from_their_names() -> None:
    source = textwrap.dedent(
        """
        class Critic:
            def __init__(self, state_dim, action_shape, lr):
                self.scale = state_dim * lr

            def compute_loss(self, a, b):
                return (a - b) * self.scale
        """
    )
    loaded = loader.load_function(source, "Critic.compute_loss", "original")
    assert loaded.python_function(1.0, 0.0) == pytest.approx(0.004)
    assert (
        "`Critic(state_dim=4, action_shape=(4,), lr=0.001)`"
        in loader.built_with["Critic.compute_loss"]
    )
    agent = (
        "class Agent:\n    def __init__(self, env):\n        pass\n"
        "    def loss(self, a, b):\n        return a\n"
    )
    with pytest.raises(loader.NeedsFactory):
        loader.load_function(agent, "Agent.loss", "original")


def test_a_constructor_is_built_from_annotations_and_token_ids() -> None:
    source = textwrap.dedent(
        """
        from __future__ import annotations


        class Extractor:
            def __init__(self, subseq_length, padding_id, heads: int, scale: float):
                self.total = subseq_length + padding_id + heads + scale

            def loss(self, a, b):
                return (a - b) * self.total
        """
    )
    loaded = loader.load_function(source, "Extractor.loss", "original")
    assert loaded.python_function(1.0, 0.0) == pytest.approx(9.1)
    assert (
        "`Extractor(subseq_length=4, padding_id=1, heads=4, scale=0.1)`"
        in loader.built_with["Extractor.loss"]
    )
    untyped = source.replace("heads: int", "heads").replace("from __future__", "#")
    with pytest.raises(loader.NeedsFactory):
        loader.load_function(untyped, "Extractor.loss", "original")


def test_forgetting_a_package_forgets_its_submodules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    namespace = tmp_path / "a" / "project_ns_pkg" / "algos"
    namespace.mkdir(parents=True)
    (namespace / "base.py").write_text("X = 1\n")  # no __init__.py: namespace packages
    try:
        project_imports.enter_project([str(tmp_path / "a")])
        import project_ns_pkg.algos.base  # type: ignore[import-not-found]  # noqa: F401

        project_imports.enter_project([str(tmp_path / "b")])
        assert not [m for m in sys.modules if m.startswith("project_ns_pkg")]
    finally:
        project_imports.enter_project([])


# -- projects as they are shipped -------------------------------------------------------

SHIPPED_LOSSES = textwrap.dedent(
    """
    import math
    import tfrewrite_absent_plotting.pyplot as plt
    from tfrewrite_absent_vision import imread as read_image


    class FocalLoss:
        scale = 2.0

        def loss(self, x):
            return math.sqrt(x) * self.scale * self._weight()

        def _weight(self):
            return 1.0

        def show(self, x):
            plt.imshow(x)
            return read_image(x)
    """
)


def test_imports_a_method_never_reaches_are_stand_ins_until_touched() -> None:
    """A plotting import that only another method uses does not make the
    file "needs package"; touching it says which package and which line."""
    piece = module_slice.slice_module(SHIPPED_LOSSES, "FocalLoss.loss")
    assert piece.unreached == {3, 4}
    assert module_slice.slice_module(SHIPPED_LOSSES, "FocalLoss.show").unreached == {2}  # math
    project_imports.missing.clear()
    loaded = loader.load_function(SHIPPED_LOSSES, "FocalLoss.loss", "original", "losses.py")
    assert loaded.function(4.0) == 4.0  # type: ignore[operator]
    assert not project_imports.missing  # an import nobody touched is no missing package
    instance = loaded.function.__self__  # type: ignore[attr-defined]
    with pytest.raises(ImportError) as touched:
        instance.show(1)
    found = project_imports.missing_package(touched.value)
    assert found is not None and found.name == "tfrewrite_absent_plotting"
    assert "imported by losses.py, line 3; touched on losses.py, line 17" in str(found)
    assert project_imports.missing == [touched.value]
    # The method that uses the package still needs it, when it is loaded.
    with pytest.raises(project_imports.MissingPackage, match="tfrewrite_absent_plotting"):
        loader.load_function(SHIPPED_LOSSES, "FocalLoss.show", "original", "losses.py")


def test_a_generated_module_missing_from_the_project_is_a_stand_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`protos/config_pb2.py` is generated by protoc, not committed: a method
    that does not use it still loads; one that does says what is missing."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "protos").mkdir()
    (tmp_path / "protos" / "__init__.py").write_text("")
    project_imports.enter_project([str(tmp_path)])
    source = textwrap.dedent(
        """
        from protos import config_pb2

        class Loss:
            def loss(self, a, b):
                return a - b

            def config(self):
                return config_pb2.Config()
        """
    )
    try:
        loaded = loader.load_function(source, "Loss.loss", "original", "train.py")
        assert loaded.function(3, 1) == 2  # type: ignore[operator]
        with pytest.raises(ImportError, match=r"`protos\.config_pb2`.*generate it \(protoc\)"):
            loaded.function.__self__.config()  # type: ignore[attr-defined]
    finally:
        project_imports.enter_project([])


def test_a_stand_in_used_at_class_creation_is_touched_there() -> None:
    source = textwrap.dedent(
        """
        import tfrewrite_absent_protos_pb2 as protos

        class Config(protos.Message):
            pass

        class Loss:
            def loss(self, a, b):
                return a - b
        """
    )
    # `Config` is not needed by `Loss.loss`: not even kept.
    assert loader.load_function(source, "Loss.loss", "original").function(3, 1) == 2  # type: ignore[operator]
    bases = source.replace("class Loss:", "class Loss(Config):")
    with pytest.raises(project_imports.MissingPackage, match="tfrewrite_absent_protos_pb2"):
        loader.load_function(bases, "Loss.loss", "original")


def test_a_stand_in_named_in_annotations_is_no_touch_but_used_values_are() -> None:
    """`frame: pd.DataFrame` and `-> pd.Series | None` only name the
    package; `pd.SCALE * 2` uses one of its values: touched, naming it."""
    source = textwrap.dedent(
        """
        import tfrewrite_absent_frames as pd

        class Estimator:
            frame: pd.DataFrame

            def loss(self, a, b):
                return a - b

            def summary(self, a) -> pd.Series | None:
                return None

            def scaled(self, a):
                return a * pd.SCALE
        """
    )
    loaded = loader.load_function(source, "Estimator.loss", "original")
    assert loaded.function(3, 1) == 2  # type: ignore[operator]
    # `scaled` reaches the package by name: needed at load.
    with pytest.raises(project_imports.MissingPackage, match="tfrewrite_absent_frames"):
        loader.load_function(source, "Estimator.scaled", "original")
    stand_in = project_imports.StandIn(
        "pd", project_imports.MissingPackage("tfrewrite_absent_frames"), "model.py, line 1"
    )
    assert (stand_in.Series | None) is stand_in.Series
    with pytest.raises(project_imports.PackageTouched, match="tfrewrite_absent_frames"):
        stand_in.SCALE * 2
    with pytest.raises(project_imports.PackageTouched):
        float(stand_in.pi)


def test_install_hints_name_the_distribution() -> None:
    def hint(module: str) -> str:
        return str(project_imports.MissingPackage(module.split(".")[0], module=module))

    assert "pip install dm-tree" in hint("tree")
    assert "pip install opencv-python" in hint("cv2")
    assert "pip install scikit-learn" in hint("sklearn.metrics")
    assert "pip install protobuf" in hint("google.protobuf")
    assert "pip install tensorflow-datasets" in hint("tensorflow_datasets")
    assert "pip install absl-py" in hint("absl")
    assert "pip install python-dateutil" in hint("dateutil")
    assert "pip install some-tool" in hint("some_tool")
    # `google.protobuf` missing beside another `google.*` package names protobuf.
    err = ModuleNotFoundError("No module named 'google.protobuf'", name="google.protobuf")
    found = project_imports.missing_package(err, record=False)
    assert found is not None and found.name == "google.protobuf"
    assert "pip install protobuf" in str(found)


def test_installed_modules_are_named_by_their_own_metadata() -> None:
    from tfrewrite.verify import distributions

    # pytest is installed here: its distribution metadata answers.
    assert distributions.distribution("_pytest") == "pytest"


def test_a_local_that_shadows_a_module_name_does_not_run_its_statement() -> None:
    """A function whose local `test_loss` shares its name with a later
    top-level statement (which divides by zero) must not run that statement;
    nor must parameters, comprehension variables or names a nested function
    binds."""
    source = textwrap.dedent(
        """
        import math

        def evaluate(values, scale=1.0):
            test_loss = sum(values) * scale
            squares = [item * item for item in values]
            def root(number):
                return math.sqrt(number)
            return root(test_loss + sum(squares))

        test_loss = 1 / 0
        values = 1 / 0
        item = 1 / 0
        number = 1 / 0
        scale = 1 / 0
        """
    )
    piece = module_slice.slice_module(source, "evaluate")
    assert piece.kept == [2, 4]
    assert loader.load_function(source, "evaluate", "original").function([1.0, 2.0]) == 8**0.5  # type: ignore[operator]
    # A name the function reads before binding it nowhere, or declares global, is the module's.
    reads = source.replace("scale=1.0):", "scale=1.0):\n    global item")
    assert 14 in module_slice.slice_module(reads, "evaluate").kept


def test_a_method_of_an_abstract_class_runs_on_its_concrete_subclass() -> None:
    source = textwrap.dedent(
        """
        import abc
        import math

        class Base(abc.ABC):
            @abc.abstractmethod
            def transform(self, x):
                ...

            def loss(self, x):
                return math.sqrt(self.transform(x))

        class Overrides(Base):
            def transform(self, x):
                return x

            def loss(self, x):
                return 0.0

        class Impl(Base):
            def transform(self, x):
                return x * 4
        """
    )
    piece = module_slice.slice_module(source, "Base.loss")
    assert piece.concrete == "Impl"  # `Overrides` runs its own `loss`
    loaded = loader.load_function(source, "Base.loss", "original")
    assert loaded.function(4.0) == 4.0  # type: ignore[operator]
    assert "`Base` is abstract" in loader.built_with["Base.loss"]
    assert "`Impl`" in loader.built_with["Base.loss"]
    # By convention too: a method that only raises NotImplementedError.
    convention = source.replace("(abc.ABC)", "").replace(
        "@abc.abstractmethod\n    def transform(self, x):\n        ...",
        "def transform(self, x):\n        raise NotImplementedError",
    )
    assert module_slice.slice_module(convention, "Base.loss").concrete == "Impl"
    # A concrete class is built as it is.
    assert module_slice.slice_module(source, "Impl.transform").concrete is None


def test_a_parameter_read_by_key_is_a_dict_of_tensors() -> None:
    from tfrewrite.verify import inputs

    source = textwrap.dedent(
        """
        import tensorflow as tf

        def score(features, labels):
            x = features["x"]
            weight = features.get("weight")
            return tf.reduce_sum(x * weight) - tf.reduce_sum(labels)
        """
    )
    usages = _usages(source, "score")
    assert usages["features"].keys == ["x", "weight"]
    assert signatures.blockers(usages) == []  # `.get` is a dict's, not an object's
    first = _first(source, "score")
    assert isinstance(first["features"], inputs.DictSpec)
    assert str(first["features"]) == "{x: float32[8,4] in [0,1], weight: float32[8,4] in [0,1]}"
    assert signatures.template(usages).startswith(
        '{features = {x = "float32[8,4] in [0,1]", weight = "float32[8,4] in [0,1]"}'
    )
    # Configured as a table; carried to the workers as JSON.
    spec = inputs.parse_spec({"x": "float32[8,3]", "weight": "float32[8,3] in [0,1]"})
    assert isinstance(spec, inputs.DictSpec)
    assert inputs.spec_from_json(spec.to_json()) == spec
    assert inputs.parse_spec({"mode": "train"}) == inputs.ValueSpec({"mode": "train"})
    from tfrewrite.verify.settings import parse_verify_settings

    settings = parse_verify_settings({"inputs": {"model:score": {"features": {"x": "float32[8]"}}}})
    configured = settings.inputs_for("model", "score")
    assert configured == {"features": inputs.DictSpec((("x", inputs.parse_spec("float32[8]")),))}


def test_dict_inputs_are_drawn_shortened_and_varied_entry_by_entry() -> None:
    from tfrewrite.verify import inputs

    specs = {
        "features": inputs.parse_spec({"x": "float32[8,3] in [0,1]", "n": "int32[8] in [0,4]"}),
        "labels": inputs.parse_spec("float32[8] in [0,1]"),
    }
    drawn = inputs.draw(specs, 0)
    assert set(drawn["features"]) == {"x", "n"} and drawn["features"]["x"].shape == (8, 3)
    short = inputs.short_batch(specs)
    assert short is not None
    shorter, full, size = short
    assert (full, size) == (8, 3)
    assert inputs.draw(shorter, 0)["features"]["x"].shape == (3, 3)
    labels = [label for label, _ in inputs.variants(drawn, specs, seeds=0)]
    assert "features['x'] high" in labels and "labels low" in labels
    _, high = next(
        v for v in inputs.variants(drawn, specs, seeds=0) if v[0] == "features['x'] high"
    )
    assert (high["features"]["x"] == 1.0).all() and high["features"]["n"] is drawn["features"]["n"]


# A Keras layer helper that unpacks its `inputs` list: a sequence batch and
# two counts that slice its time axis together.
UNPACKING = """
import tensorflow as tf


class Masker(tf.keras.layers.Layer):
    def call(self, x):
        return self.mask([x, 2, 2])

    def mask(self, inputs):
        y, n_context, n_target = inputs
        rows = y.shape[0]
        seen = y[:, :n_context]
        return tf.concat([seen, tf.zeros((rows, n_target, y.shape[-1]))], axis=1)
"""


# Two counts that slice one time axis together: they fit it only when small.
WINDOW = """
import tensorflow as tf


class Window(tf.keras.layers.Layer):
    def call(self, x):
        return self.window([x, 2, 2])

    def window(self, inputs):
        x, n_context, n_target = inputs
        rows = x.shape[0]
        both = x[:, : n_context + n_target]
        return tf.reshape(both, (rows, n_context + n_target, x.shape[-1]))
"""


# Context and target rows one after the other along axis 1, and the third
# nearest context row picked: the axis holds both counts, the context three
# rows or more.
NEIGHBOURS = """
import tensorflow as tf


class Neighbours(tf.keras.layers.Layer):
    def call(self, x):
        return self.gaps([x, x, 4, 4])

    def gaps(self, inputs):
        x, y, n_context, n_target = inputs
        rows = x.shape[0]
        context = x[:, :n_context]
        target = y[:, n_context : n_context + n_target]
        distance = tf.reduce_sum(tf.abs(context[:, :, None] - context[:, None]), axis=-1)
        third = tf.argsort(distance, axis=-1)[:, :, 2]
        picked = tf.gather(context, third, batch_dims=1)
        return tf.reshape(picked - target, (rows, n_target, x.shape[-1]))
"""


def test_a_parameter_unpacked_into_names_is_a_list_of_what_each_name_needs() -> None:
    from tfrewrite.verify import inputs

    usages = _usages(UNPACKING, "Masker.mask")
    assert usages["inputs"].elements == ["y", "n_context", "n_target"]
    parts = usages["inputs"].parts
    assert parts["n_context"].scalar and parts["n_target"].scalar  # a slice bound, a shape entry
    assert not parts["y"].scalar
    first = _first(UNPACKING, "Masker.mask")
    assert isinstance(first["inputs"], inputs.SequenceSpec)
    assert str(first["inputs"]) == "[float32[8,4] in [0,1], 4, 4]"
    labels = [label for label, _ in signatures.candidates(usages)]
    assert "small counts, rank 3" in labels
    assert signatures.template(usages).startswith('{inputs = ["float32[8,4] in [0,1]", 4, 4]}')
    # Configured as an array; carried to the workers as JSON; drawn, shortened, varied.
    spec = inputs.parse_spec(["float32[8,6,2] in [0,1]", 3, 3])
    assert spec == inputs.SequenceSpec(
        (inputs.parse_spec("float32[8,6,2] in [0,1]"), inputs.ValueSpec(3), inputs.ValueSpec(3))
    )
    assert inputs.spec_from_json(spec.to_json()) == spec
    assert inputs.parse_spec(["a", "b"]) == inputs.ValueSpec(["a", "b"])
    drawn = inputs.draw({"inputs": spec}, 0)
    assert drawn["inputs"][0].shape == (8, 6, 2) and drawn["inputs"][1:] == [3, 3]
    short = inputs.short_batch({"inputs": spec})
    assert short is not None and inputs.draw(short[0], 0)["inputs"][0].shape == (3, 6, 2)
    _, high = next(
        v for v in inputs.variants(drawn, {"inputs": spec}, seeds=0) if v[0] == "inputs[0] high"
    )
    assert (high["inputs"][0] == 1.0).all() and high["inputs"][1:] == [3, 3]
    from tfrewrite.verify.settings import parse_verify_settings

    configured = {"layers:Masker.mask": {"inputs": ["float32[8,6,2] in [0,1]", 3, 3]}}
    settings = parse_verify_settings({"inputs": configured})
    assert settings.inputs_for("layers", "Masker.mask") == {"inputs": spec}


def test_an_abstract_class_runs_on_a_subclass_in_another_file_of_its_folder(
    tmp_path: Path,
) -> None:
    base = textwrap.dedent(
        """
        import abc

        class Base(abc.ABC):
            @abc.abstractmethod
            def transform(self, x):
                ...

            def loss(self, x):
                return self.transform(x) + 1
        """
    )
    (tmp_path / "base.py").write_text(base)
    (tmp_path / "impl.py").write_text(
        "from base import Base\n\nFACTOR = 3\n\n\nclass Impl(Base):\n"
        "    def transform(self, x):\n        return x * FACTOR\n\n\ntrain = 1 / 0\n"
    )
    path = str(tmp_path / "base.py")
    assert module_slice.slice_module(base, "Base.loss").concrete is None
    loaded = loader.load_function(base, "Base.loss", "original", path)
    assert loaded.function(2) == 7  # type: ignore[operator]
    # The subclass is built on this side's `Base`: the rewrite's method runs.
    rewritten = loader.load_function(base.replace("+ 1", "+ 2"), "Base.loss", "rewrite", path)
    assert rewritten.function(2) == 8  # type: ignore[operator]
    assert "its concrete subclass in impl.py" in loader.built_with["Base.loss"]
