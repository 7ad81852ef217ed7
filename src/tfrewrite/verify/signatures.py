"""Input signatures found by search, guided by how each parameter is used.

Default inputs (`float32[8,4] in [0,1]` for every parameter) fit most losses,
but not a loss on integer labels (`sparse_softmax_cross_entropy_with_logits`
wants labels of rank one less than the logits), a gather on indices, an image
augmentation (`tf.image.resize` wants rank 3 or 4) or a comparison with an
`argmax` (int64). When the original rejects the default inputs, verification
tries candidate signatures, most likely first, and keeps the first one the
original runs on eagerly.

The likelihoods come from the function's syntax tree: the ops each parameter
flows into (followed through helper functions of the same module it is passed
to), the ranks its uses need (`x.shape[2]`, `axis=-1`, `x[:, :, 0]`), the
shapes it is reshaped to, and what makes it no tensor at all (it is called,
or has attributes other than a tensor's: a model, an optimizer, a config).

Standard library only: used by target selection (no TensorFlow) and by the
workers.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

from tfrewrite.verify.inputs import DictSpec, SequenceSpec, Spec, TensorSpec, ValueSpec

BATCH = 8
CLASSES = 4
# A count or size parameter, by default.
COUNT = 4
# The side of a synthesised image, and of a size tuple read by index.
IMAGE_SIDE = 16
MAX_CANDIDATES = 24
DEPTH = 3  # helper functions followed into

# op name -> (positions or keywords of integer arguments)
_INTEGER_ARGS: dict[str, tuple[int | str, ...]] = {
    "one_hot": (0, "indices"),
    "gather": (1, "indices"),
    "gather_nd": (1, "indices"),
    "batch_gather": (1, "indices"),
    "embedding_lookup": (1, "ids"),
    "bincount": (0, "arr"),
    "unsorted_segment_sum": (1, "segment_ids"),
    "unsorted_segment_mean": (1, "segment_ids"),
    "unsorted_segment_max": (1, "segment_ids"),
    "segment_sum": (1, "segment_ids"),
    "segment_mean": (1, "segment_ids"),
    "sequence_mask": (0, "lengths"),
}
# Sparse losses and metrics: (labels position or keyword, logits position or keyword)
_SPARSE: dict[str, tuple[tuple[int | str, ...], tuple[int | str, ...]]] = {
    "sparse_softmax_cross_entropy_with_logits": ((0, "labels"), (1, "logits")),
    "sparse_categorical_crossentropy": ((0, "y_true"), (1, "y_pred")),
    "sparse_categorical_accuracy": ((0, "y_true"), (1, "y_pred")),
    "sparse_top_k_categorical_accuracy": ((0, "y_true"), (1, "y_pred")),
}
_SHAPE_FIRST = frozenset(
    {
        "uniform",
        "normal",
        "truncated_normal",
        "zeros",
        "ones",
        "fill",
        "stateless_uniform",
        "stateless_normal",
        "empty",
    }
)
_SHAPE_SECOND = frozenset({"reshape", "resize", "tile", "broadcast_to", "random_crop"})
_IMAGE_OPS = frozenset({"conv2d", "max_pool2d", "avg_pool2d", "depthwise_conv2d", "max_pool"})
_TENSOR_ATTRS = frozenset(
    {
        "shape",
        "dtype",
        "ndim",
        "numpy",
        "get_shape",
        "T",
        "astype",
        "reshape",
        "sum",
        "mean",
        "max",
        "min",
        "set_shape",
        "size",
    }
)
# A dict's methods: a parameter read through them is a dict of tensors, not an object.
_DICT_ATTRS = frozenset({"get", "keys", "values", "items"})
# Keywords of TensorFlow ops that take a count (`tf.repeat(x, repeats=n)`).
_COUNT_KEYWORDS = frozenset({"repeats", "depth", "maxlen", "num", "num_rows", "num_columns"})
_PASS_THROUGH = frozenset(
    {"convert_to_tensor", "squeeze", "identity", "stop_gradient", "expand_dims", "asarray"}
)


@dataclass
class Usage:
    """What the uses of one parameter say about the value it needs."""

    integer: bool = False  # indices, sparse labels, one_hot, range bounds
    int64: bool = False  # compared with an argmax (int64)
    image: bool = False  # tf.image ops, conv2d: rank 3 or 4 with channels
    min_rank: int = 0
    shapes: list[tuple[int, ...]] = field(default_factory=list)  # from reshape(p, [-1, ...])
    labels_of: str | None = None  # sparse labels of this (logits) parameter
    scalar: bool = False  # a Python number: range(p), p used as a count
    not_tensor: str | None = None  # why it cannot be a tensor ("it is called")
    keys: list[str] = field(default_factory=list)  # a dict of tensors read by key: p["image"]
    # How many items a sequence read by constant index needs (`size[1]`: 2).
    indexed: int = 0
    # A list unpacked into names (`y, n_context = inputs`): the names, and
    # what the uses of each say, as for a parameter.
    elements: list[str] = field(default_factory=list)
    parts: dict[str, Usage] = field(default_factory=dict)

    def merge(self, other: Usage) -> None:
        self.integer |= other.integer
        self.int64 |= other.int64
        self.image |= other.image
        self.min_rank = max(self.min_rank, other.min_rank)
        self.shapes += [s for s in other.shapes if s not in self.shapes]
        self.scalar |= other.scalar
        self.not_tensor = self.not_tensor or other.not_tensor
        self.keys += [k for k in other.keys if k not in self.keys]
        self.indexed = max(self.indexed, other.indexed)
        if other.elements and not self.elements:
            self.elements, self.parts = other.elements, other.parts


def _callee(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _argument(node: ast.Call, where: tuple[int | str, ...]) -> ast.expr | None:
    for key in where:
        if isinstance(key, int) and key < len(node.args):
            return node.args[key]
        if isinstance(key, str):
            for kw in node.keywords:
                if kw.arg == key:
                    return kw.value
    return None


def _int(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int)
    ):
        return -node.operand.value
    return None


def _rank_for_axes(node: ast.expr) -> int:
    """The least rank a tensor reduced over `axis=node` has: `axis=2` needs
    3, `axis=-2` needs 2, `axis=[1, 2, 3, 4]` needs 5; 0 when unknown."""
    axes = node.elts if isinstance(node, (ast.List, ast.Tuple)) else [node]
    ranks = [a + 1 if a >= 0 else -a for a in (_int(e) for e in axes) if a is not None]
    return max(ranks, default=0)


def _is_argmax(node: ast.expr, argmaxed: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in argmaxed
    return isinstance(node, ast.Call) and _callee(node) == "argmax"


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    """Required positional parameters (after `self` for a method)."""
    args = node.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    if method and positional and not is_static:
        positional = positional[1:]
    required = len(positional) - len(args.defaults)
    return positional[: max(required, 0)]


class _Analysis:
    def __init__(self, module: ast.Module) -> None:
        self.functions = {
            s.name: s for s in module.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.constants: dict[str, int] = {}
        for stmt in module.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and _int(stmt.value) is not None
            ):
                self.constants[stmt.targets[0].id] = _int(stmt.value)  # type: ignore[assignment]

    def usage(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str], depth: int = 0
    ) -> dict[str, Usage]:
        usages = {p: Usage() for p in params}
        # Names that hold a parameter's value (x = p; x = tf.squeeze(p)).
        alias: dict[str, str] = {p: p for p in params}
        argmaxed: set[str] = set()  # names bound to an argmax (int64)
        for sub in ast.walk(node):
            if (
                isinstance(sub, ast.Assign)
                and isinstance(sub.value, ast.Call)
                and _callee(sub.value) == "argmax"
            ):
                argmaxed.update(t.id for t in sub.targets if isinstance(t, ast.Name))
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1:
                source = self._source(sub.value, alias)
                if source and isinstance(sub.targets[0], ast.Name):
                    alias.setdefault(sub.targets[0].id, source)

        def owner(expr: ast.expr | None) -> str | None:
            return self._source(expr, alias) if expr is not None else None

        for sub in ast.walk(node):
            unpacked = _unpacked_names(sub)
            name = owner(sub.value) if unpacked and isinstance(sub, ast.Assign) else None
            if name and not usages[name].elements and depth < DEPTH:
                usages[name].elements = unpacked
                usages[name].parts = self.usage(node, unpacked, depth + 1)

        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                self._call(sub, owner, usages, depth, argmaxed)
                name = owner(sub.func) if isinstance(sub.func, ast.Name) else None
                if name and isinstance(sub.func, ast.Name) and sub.func.id in params:
                    usages[name].not_tensor = f"`{name}` is called (a model or a function)"
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                name = alias.get(sub.value.id)
                if name and sub.value.id in params and sub.attr in _DICT_ATTRS:
                    continue  # `features.get("x")`: its keys are read in `_call`
                if name and sub.value.id in params and sub.attr not in _TENSOR_ATTRS:
                    usages[name].not_tensor = usages[name].not_tensor or (
                        f"`{name}.{sub.attr}` is used (an object, not a tensor)"
                    )
            elif isinstance(sub, ast.Subscript):
                self._subscript(sub, owner, usages)

            elif isinstance(sub, ast.Compare):
                sides = [sub.left, *sub.comparators]
                if any(_is_argmax(s, argmaxed) for s in sides):
                    for s in sides:
                        name = owner(s)
                        if name:
                            usages[name].integer = usages[name].int64 = True
        return usages

    def _source(self, expr: ast.expr, alias: dict[str, str]) -> str | None:
        """The parameter whose value `expr` is (through pass-through ops)."""
        while isinstance(expr, ast.Call) and _callee(expr) in _PASS_THROUGH and expr.args:
            expr = expr.args[0]
        if isinstance(expr, ast.Name):
            return alias.get(expr.id)
        return None

    def _call(  # noqa: ANN001
        self, node: ast.Call, owner, usages: dict[str, Usage], depth: int, argmaxed: set[str]
    ) -> None:
        name = _callee(node)
        if (
            name == "get"
            and isinstance(node.func, ast.Attribute)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            p = owner(node.func.value)
            if p and node.args[0].value not in usages[p].keys:
                usages[p].keys.append(node.args[0].value)
        if name in _INTEGER_ARGS:
            p = owner(_argument(node, _INTEGER_ARGS[name]))
            if p:
                usages[p].integer = True
        if name in _SPARSE:
            labels_at, logits_at = _SPARSE[name]
            labels, logits = owner(_argument(node, labels_at)), owner(_argument(node, logits_at))
            if labels:
                usages[labels].integer = True
                usages[labels].labels_of = logits
        for kw in node.keywords:
            if kw.arg in _COUNT_KEYWORDS:
                for term in _terms(kw.value):
                    p = owner(term)
                    if p:
                        usages[p].scalar = True  # `repeats=n`: a count
        if name == "range":
            for arg in node.args:
                p = owner(arg)
                if p:
                    usages[p].scalar = True
        if name == "equal" and any(_is_argmax(a, argmaxed) for a in node.args):
            for arg in node.args:
                p = owner(arg)
                if p:
                    usages[p].integer = usages[p].int64 = True
        # Elements of a shape or size list (`tf.random.uniform([batch_size, z_dim])`)
        # are Python numbers.
        shape_lists = [kw.value for kw in node.keywords if kw.arg in ("shape", "size")]
        if name in _SHAPE_FIRST and node.args:
            shape_lists.append(node.args[0])
        if name in _SHAPE_SECOND and len(node.args) > 1:
            shape_lists.append(node.args[1])
        for shape in shape_lists:
            if isinstance(shape, (ast.List, ast.Tuple)):
                for elt in shape.elts:
                    for term in _terms(elt):
                        p = owner(term)
                        if p:
                            usages[p].scalar = True
        dotted = ast.unparse(node.func)
        if ".image." in f".{dotted}" or name in _IMAGE_OPS:
            p = owner(_argument(node, (0, "image", "images", "input")))
            if p:
                usages[p].image = True
        if name == "reshape" and len(node.args) >= 2:
            p = owner(node.args[0])
            shape = self._shape(node.args[1])
            if p and shape:
                usages[p].shapes.append(shape)
        for kw in node.keywords:
            if kw.arg == "axis" and node.args:
                rank = _rank_for_axes(kw.value)
                # `tf.reduce_sum(pred * mask, axis=[1, 2, 3])`: each tensor
                # the reduced value is made of (elementwise) has that rank.
                for term in [node.args[0], *_terms(node.args[0])]:
                    p = owner(term)
                    if p and rank:
                        usages[p].min_rank = max(usages[p].min_rank, rank)
        # Follow the parameter into a helper function of the same module.
        helper = self.functions.get(name) if isinstance(node.func, ast.Name) else None
        if helper is not None and depth < DEPTH:
            inner = parameters(helper, method=False)
            all_params = [a.arg for a in (*helper.args.posonlyargs, *helper.args.args)]
            passed: dict[str, str] = {}
            for i, arg in enumerate(node.args):
                p = owner(arg)
                if p and i < len(all_params):
                    passed[all_params[i]] = p
            for kw in node.keywords:
                p = owner(kw.value)
                if p and kw.arg in all_params:
                    passed[kw.arg] = p
            if passed:
                found = self.usage(helper, list(dict.fromkeys([*inner, *passed])), depth + 1)
                for inner_name, outer in passed.items():
                    inner_usage = found[inner_name]
                    usages[outer].merge(inner_usage)
                    if inner_usage.labels_of in passed:
                        usages[outer].labels_of = passed[inner_usage.labels_of]

    def _shape(self, node: ast.expr) -> tuple[int, ...] | None:
        if not isinstance(node, (ast.List, ast.Tuple)):
            return None
        dims: list[int] = []
        for elt in node.elts:
            value = _int(elt)
            if value is None and isinstance(elt, ast.Name):
                value = self.constants.get(elt.id)
            if value is None:
                return None
            dims.append(BATCH if value == -1 else value)
        return tuple(dims) or None

    def _subscript(self, node: ast.Subscript, owner, usages: dict[str, Usage]) -> None:  # noqa: ANN001
        # x.shape[k] / tf.shape(x)[k] -> rank > k
        value = node.value
        index = _int(node.slice)
        if index is not None:
            if isinstance(value, ast.Attribute) and value.attr == "shape":
                p = owner(value.value)
                if p:
                    usages[p].min_rank = max(
                        usages[p].min_rank, index + 1 if index >= 0 else -index
                    )
            elif isinstance(value, ast.Call) and _callee(value) == "shape" and value.args:
                p = owner(value.args[0])
                if p:
                    usages[p].min_rank = max(
                        usages[p].min_rank, index + 1 if index >= 0 else -index
                    )
        p = owner(value)
        if p and index is not None and index >= 0:
            usages[p].indexed = max(usages[p].indexed, index + 1)
        key = node.slice.value if isinstance(node.slice, ast.Constant) else None
        if p and isinstance(key, str) and key not in usages[p].keys:
            usages[p].keys.append(key)  # features["image"]: a dict of tensors
        bounds = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for bound in bounds:
            if isinstance(bound, ast.Slice):
                for end in (bound.lower, bound.upper, bound.step):
                    for term in _terms(end):
                        q = owner(term)
                        if q:
                            usages[q].scalar = True  # `y[:, :n]`: a slice bound is an int
        if p and isinstance(node.slice, ast.Tuple):
            dims = [
                e for e in node.slice.elts if not (isinstance(e, ast.Constant) and e.value is ...)
            ]
            usages[p].min_rank = max(usages[p].min_rank, len(dims))


def _terms(node: ast.expr | None) -> list[ast.Name]:
    """The names an integer expression adds up (`n_context + n_target`,
    `2 * n`): each is a number where the whole is."""
    if isinstance(node, ast.Name):
        return [node]
    if isinstance(node, ast.BinOp):
        return _terms(node.left) + _terms(node.right)
    if isinstance(node, ast.UnaryOp):
        return _terms(node.operand)
    return []


def _unpacked_names(node: ast.AST) -> list[str]:
    """The names `a, b, c = value` binds, in order; [] for any other
    statement or a target with a starred or nested part."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return []
    target = node.targets[0]
    if not isinstance(target, (ast.Tuple, ast.List)) or isinstance(
        node.value, (ast.Tuple, ast.List)
    ):
        return []
    names = [e.id for e in target.elts if isinstance(e, ast.Name)]
    return names if len(names) == len(target.elts) else []


def analyse(
    tree: ast.Module, node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool
) -> dict[str, Usage]:
    """Usage of each required parameter of `node`."""
    return _Analysis(tree).usage(node, parameters(node, method))


def blockers(usages: dict[str, Usage]) -> list[str]:
    """Why some parameters cannot be synthesised (each reason names the parameter)."""
    return [u.not_tensor for u in usages.values() if u.not_tensor]


def _size_name(name: str) -> bool:
    """`size`, `batch_size`, `z_dim`, `num_classes`, `n_steps`, `depth`: a number by its name."""
    return (
        name in ("size", "depth", "k", "n", "steps", "length", "units")
        or name.endswith(("_size", "_dim", "_len", "_length", "_steps"))
        or name.startswith(("num_", "n_"))
    )


def _shape(rank: int, classes: int = CLASSES) -> tuple[int, ...]:
    return (BATCH, *([classes] * max(rank - 1, 0)))


def _float(shape: tuple[int, ...]) -> TensorSpec:
    return TensorSpec("float32", shape, 0.0, 1.0, strict=False)


def _labels(shape: tuple[int, ...], classes: int, int64: bool) -> TensorSpec:
    return TensorSpec("int64" if int64 else "int32", shape, 0, classes - 1, strict=True)


def _layout(usages: dict[str, Usage], style: str) -> dict[str, Spec]:
    """One candidate signature. `style` picks the shape family the hints leave open."""
    classes = 10 if style == "ten classes" else CLASSES
    if style.startswith("long axes"):
        # Counts that slice one axis one after the other
        # (`x[:, :n_context]`, then `x[:, n_context:n_context + n_target]`)
        # need an axis as long as their sum.
        classes = 2 * COUNT
    rank = {"rank 1": 1, "rank 2": 2, "rank 3": 3, "ten classes": 2, "column": 2}.get(style, 2)
    if style.startswith(("small counts", "long axes")):
        rank = 3 if style.endswith("rank 3") else 2
    specs: dict[str, Spec] = {}
    for name, usage in usages.items():
        if usage.scalar or ("sizes by name" in style and _size_name(name)):
            # A count or a size; counts that slice a dimension together
            # (`x[:, :n_context + n_target]`) fit in it when small. A size
            # read by index (`desired_size[0]`) is a tuple of sizes.
            count = 2 if style.startswith("small counts") else COUNT
            if usage.indexed and not usage.scalar:
                specs[name] = ValueSpec(tuple([IMAGE_SIDE] * max(usage.indexed, 2)))
            else:
                specs[name] = ValueSpec(count)
            continue
        if usage.parts:
            inner = _layout(usage.parts, style)
            specs[name] = SequenceSpec(tuple(inner[e] for e in usage.elements))  # type: ignore[misc]
            continue
        if usage.keys:
            # Each entry as a float batch of the style's rank (the uses of
            # an entry are not followed: configure them where this fails).
            entry = _float((BATCH, 1) if style == "column" else _shape(rank, classes))
            specs[name] = DictSpec(tuple((key, entry) for key in usage.keys))
            continue
        r = max(rank, usage.min_rank)
        shape = (BATCH, 1) if style == "column" and usage.min_rank <= 2 else _shape(r, classes)
        if usage.shapes and style != "ignore reshape":
            shape = usage.shapes[0]
        if usage.image:
            side = 256 if style.startswith("large") else IMAGE_SIDE
            unbatched = "unbatched image" in style
            shape = (side, side, 3) if unbatched else (BATCH, side, side, 3)
        if usage.integer:
            if usage.labels_of is not None:
                partner = usages.get(usage.labels_of)
                partner_rank = max(rank, partner.min_rank if partner else 0, 2)
                shape = _shape(partner_rank - 1, classes)
            specs[name] = _labels(shape, classes, usage.int64)
        else:
            specs[name] = _float(shape)
    return specs


def candidates(usages: dict[str, Usage]) -> Iterator[tuple[str, dict[str, Spec]]]:
    """Candidate signatures, most likely first, without repeats: (label, specs)."""
    seen: list[dict[str, Spec]] = []
    styles = [
        "hinted",
        "sizes by name",
        "unbatched image",
        # An image and the size it is resized or padded to.
        "unbatched image, sizes by name",
        "rank 1",
        "column",
        "ten classes",
        "rank 3",
        "small counts",
        "small counts, rank 3",
        "long axes",
        "long axes, rank 3",
        "ignore reshape",
        "large unbatched image",  # crops to a fixed size (256 x 256)
        "large image",
    ]

    def fresh(specs: dict[str, Spec]) -> bool:
        if specs in seen:
            return False
        seen.append(specs)
        return True

    for style in styles:
        specs = _layout(usages, style)
        if fresh(specs):
            yield style, specs
    # Hints missed an integer argument: each parameter in turn as labels or
    # indices, then every parameter integer.
    names = list(usages)
    for style in ("hinted", "rank 1"):
        base = _layout(usages, style)
        for name in names:
            spec = base[name]
            if isinstance(spec, TensorSpec) and spec.is_float:
                for dtype in ("int32", "int64"):
                    specs = dict(base)
                    specs[name] = dataclasses.replace(
                        spec,
                        dtype=dtype,
                        shape=spec.shape[:-1] if style == "hinted" else spec.shape,
                        low=0,
                        high=CLASSES - 1,
                        strict=True,
                    )
                    if fresh(specs):
                        yield f"`{name}` as {dtype} labels", specs
        every = {
            n: (_labels(s.shape, CLASSES, False) if isinstance(s, TensorSpec) else s)
            for n, s in base.items()
        }
        if fresh(every):
            yield "every input int32", every


def template(usages: dict[str, Usage]) -> str:
    """An `inputs` table to start from, for the message when nothing fits."""
    specs = _layout(usages, "hinted")
    return "{" + ", ".join(f"{n} = {_toml(s)}" for n, s in specs.items()) + "}"


def _toml(spec: Spec) -> str:
    if isinstance(spec, DictSpec):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in spec.entries) + "}"
    if isinstance(spec, SequenceSpec):
        return "[" + ", ".join(_toml(e) for e in spec.elements) + "]"
    return f'"{spec}"' if isinstance(spec, TensorSpec) else repr(spec.value)


def describe(specs: dict[str, Spec]) -> str:
    return ", ".join(f"{n} = {s}" for n, s in specs.items())
