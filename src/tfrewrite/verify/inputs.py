"""Input specifications and synthesis.

A specification reads like a tensor type: `"float32[8,16,16,1] in [0,1]"` is
an 8×16×16×1 float32 batch drawn uniformly from [0, 1]; `"float32[8,4]"`
(no range) draws from a standard normal; `"int32[8] in [0,10]"` draws
integers from 0 to 10 inclusive; `"float32[]"` is a scalar. A table of
specifications (`features = {image = "float32[8,16,16,3]", label = "int32[8]
in [0,9]"}`) is a dict of tensors, as a `tf.data` pipeline or an Estimator
`model_fn` passes its features. An array of specifications (`inputs =
["float32[8,4,2]", 2, 3]`) is a list, as a Keras layer unpacks its `inputs`
(`y, n_context, n_target = inputs`). A TOML value that is not a string
(`from_logits = true`, `axis = -1`) is passed as that Python value.

Loss-shaped functions — two required parameters `(y_true, y_pred)`, with an
optional `sample_weight` — need no configuration: both get
`float32[8,4] in [0,1]` (probabilities keep `log`-based losses finite). That
default range is where draws start; the search for branch-covering inputs may
leave it (a configured range it never leaves).

Parsing is standard library only; generation imports NumPy lazily.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

DTYPES = (
    "float16",
    "float32",
    "float64",
    "bfloat16",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
)
DEFAULT_LOSS_SPEC = "float32[8,4] in [0,1]"
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_SPEC = re.compile(
    rf"^\s*(?P<dtype>[a-z0-9]+)\s*(?:\[(?P<shape>[\d,\s]*)\])?\s*"
    rf"(?:in\s*\[\s*(?P<low>{_NUMBER})\s*,\s*(?P<high>{_NUMBER})\s*\])?\s*$"
)


class SpecError(ValueError):
    """A malformed input specification."""


@dataclass(frozen=True)
class TensorSpec:
    dtype: str
    shape: tuple[int, ...]
    low: float | None = None
    high: float | None = None
    # A configured range is a domain the search must respect; the default
    # loss range is only where draws start, and the branch search may leave it.
    strict: bool = True

    @property
    def is_float(self) -> bool:
        return self.dtype.startswith(("float", "bfloat"))

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "tensor",
            "dtype": self.dtype,
            "shape": list(self.shape),
            "low": self.low,
            "high": self.high,
            "strict": self.strict,
        }

    def __str__(self) -> str:
        text = f"{self.dtype}[{','.join(map(str, self.shape))}]"
        return text if self.low is None else f"{text} in [{self.low:g},{self.high:g}]"


@dataclass(frozen=True)
class ValueSpec:
    value: Any

    def to_json(self) -> dict[str, Any]:
        return {"kind": "value", "value": self.value}

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True)
class DictSpec:
    """A dict of tensors by key (`features["image"]`)."""

    entries: tuple[tuple[str, TensorSpec], ...]

    def to_json(self) -> dict[str, Any]:
        return {"kind": "dict", "entries": {k: v.to_json() for k, v in self.entries}}

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k}: {v}" for k, v in self.entries) + "}"


@dataclass(frozen=True)
class SequenceSpec:
    """A list of inputs by position (`y, n_context = inputs`)."""

    elements: tuple[TensorSpec | ValueSpec, ...]

    def to_json(self) -> dict[str, Any]:
        return {"kind": "list", "elements": [e.to_json() for e in self.elements]}

    def __str__(self) -> str:
        return "[" + ", ".join(str(e) for e in self.elements) + "]"


Spec = TensorSpec | ValueSpec | DictSpec | SequenceSpec


def parse_spec(value: Any) -> Spec:
    """A specification from its configuration value."""
    if isinstance(value, Mapping) and value and all(isinstance(v, str) for v in value.values()):
        try:
            entries = tuple((str(k), parse_spec(v)) for k, v in value.items())
        except SpecError:
            return ValueSpec(value)  # a dict of plain strings, passed as it is
        return DictSpec(entries)  # type: ignore[arg-type]
    if isinstance(value, list) and any(isinstance(v, str) for v in value):
        try:
            elements = tuple(parse_spec(v) for v in value)
        except SpecError:
            return ValueSpec(value)  # a list of plain strings, passed as it is
        if all(isinstance(e, (TensorSpec, ValueSpec)) for e in elements):
            return SequenceSpec(elements)  # type: ignore[arg-type]
        return ValueSpec(value)
    if not isinstance(value, str):
        return ValueSpec(value)
    match = _SPEC.match(value)
    if match is None:
        raise SpecError(
            f'bad input specification {value!r}: expected e.g. "float32[8,16] in [0,1]"'
        )
    dtype = match["dtype"]
    if dtype not in DTYPES:
        raise SpecError(f"bad input specification {value!r}: unknown dtype {dtype!r}")
    shape_text = (match["shape"] or "").replace(" ", "")
    shape = tuple(int(d) for d in shape_text.split(",") if d) if shape_text else ()
    low = float(match["low"]) if match["low"] is not None else None
    high = float(match["high"]) if match["high"] is not None else None
    if low is not None and high is not None and low > high:
        raise SpecError(f"bad input specification {value!r}: empty range")
    return TensorSpec(dtype, shape, low, high)


def spec_from_json(data: Mapping[str, Any]) -> Spec:
    if data["kind"] == "value":
        return ValueSpec(data["value"])
    if data["kind"] == "dict":
        entries = tuple((k, spec_from_json(v)) for k, v in data["entries"].items())
        return DictSpec(entries)  # type: ignore[arg-type]
    if data["kind"] == "list":
        return SequenceSpec(tuple(spec_from_json(e) for e in data["elements"]))  # type: ignore[misc]
    return TensorSpec(
        data["dtype"], tuple(data["shape"]), data["low"], data["high"], data.get("strict", True)
    )


def specs_for(
    function: Any, configured: Mapping[str, Spec], guess: bool = False
) -> dict[str, Spec]:
    """Which arguments to pass and how to make them: every required parameter
    needs a specification, from the configuration or because the function is
    loss-shaped (or, with `guess`, a default that the signature search may
    replace); optional parameters are passed only when configured."""
    signature = inspect.signature(function)
    params = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    unknown = sorted(set(configured) - {p.name for p in params})
    if unknown:
        raise SpecError(f"configured input `{unknown[0]}` is not a parameter of the function")
    required = [p for p in params if p.default is p.empty]
    loss_shaped = len([p for p in required if p.kind != p.KEYWORD_ONLY]) == 2 and len(required) == 2
    specs: dict[str, Spec] = {}
    for p in params:
        if p.name in configured:
            specs[p.name] = configured[p.name]
        elif p.default is p.empty:
            if not loss_shaped and not guess:
                raise SpecError(
                    f"no input specification for parameter `{p.name}` (the function is not "
                    "loss-shaped); give one in [tool.tfrewrite.verify] inputs"
                )
            specs[p.name] = dataclasses.replace(parse_spec(DEFAULT_LOSS_SPEC), strict=False)
    return specs


def generate(spec: Spec, rng: Any) -> Any:
    """One input drawn from `spec` with the NumPy generator `rng`."""
    import numpy as np

    if isinstance(spec, ValueSpec):
        return spec.value
    if isinstance(spec, DictSpec):
        return {key: generate(entry, rng) for key, entry in spec.entries}
    if isinstance(spec, SequenceSpec):
        return [generate(element, rng) for element in spec.elements]
    if spec.dtype == "bool":
        return rng.random(spec.shape) < 0.5
    if spec.is_float:
        if spec.low is None:
            values = rng.standard_normal(spec.shape)
        else:
            values = rng.uniform(spec.low, spec.high, spec.shape)
        return np.asarray(values, dtype="float32" if spec.dtype == "bfloat16" else spec.dtype)
    low = int(spec.low) if spec.low is not None else 0
    high = int(spec.high) if spec.high is not None else 10
    return rng.integers(low, high + 1, spec.shape).astype(spec.dtype)


def draw(specs: Mapping[str, Spec], seed: int) -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(seed)
    return {name: generate(spec, rng) for name, spec in specs.items()}


def _clip(value: Any, spec: TensorSpec) -> Any:
    import numpy as np

    if spec.low is None or not spec.strict:
        return value.astype(value.dtype)
    return np.clip(value, spec.low, spec.high).astype(value.dtype)


# Where a tensor input sits: its parameter, and its key in a dict parameter
# or its position in a list one (None for the parameter itself).
Slots = Mapping[str, tuple[str, str | int | None, TensorSpec]]


def transformed(
    base: Mapping[str, Any],
    slots: Slots,
    names: list[str],
    fn: Any,
    start: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`fn(value as float64, spec)` applied to the `names` (slots, see
    `tensor_slots`) of `base`, into a copy of `start` (`base`), kept inside
    each configured range and in each value's dtype."""
    import numpy as np

    args = dict(base if start is None else start)
    for n in names:
        param, key, spec = slots[n]
        old = base[param] if key is None else base[param][key]
        new = _clip(np.asarray(fn(np.asarray(old, dtype="float64"), spec)), spec).astype(
            np.asarray(old).dtype
        )
        if key is None:
            args[param] = new
        elif isinstance(key, int):
            args[param] = [new if i == key else v for i, v in enumerate(args[param])]
        else:
            args[param] = {**args[param], key: new}
    return args


def variants(
    base: Mapping[str, Any], specs: Mapping[str, Spec], seeds: int = 24
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Inputs derived from `base` that push values across thresholds:
    constants at the range ends, scaling, shifting and sign flips (all float
    arguments together, then one at a time), kept inside each declared
    range; then fresh draws. These know nothing of the code: inputs aimed
    at the constants its conditions compare with, and at its NaN,
    infinity and emptiness tests, come from `boundaries`, beside these
    (see `proof_inputs`)."""
    import numpy as np

    # Each tensor to vary, by the name shown: a parameter, or an entry of a
    # dict parameter (`features["x"]`).
    slots = tensor_slots(specs)
    floats = [n for n, (_, _, s) in slots.items() if s.dtype != "bool"]

    def transform(
        names: list[str], label: str, fn: Any, start: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        return label, transformed(base, slots, names, fn, start)

    def ends(spec: TensorSpec) -> tuple[float, float]:
        return (spec.low, spec.high) if spec.low is not None else (-3.0, 3.0)  # type: ignore[return-value]

    groups = [floats] + ([[n] for n in floats] if len(floats) > 1 else [])
    steps: list[tuple[str, Any]] = [
        ("low", lambda x, s: np.full_like(x, ends(s)[0])),
        ("high", lambda x, s: np.full_like(x, ends(s)[1])),
        ("middle", lambda x, s: np.full_like(x, sum(ends(s)) / 2)),
        ("zeros", lambda x, s: np.zeros_like(x)),
        ("negated", lambda x, s: -x),
        ("scaled by 0.1", lambda x, s: x * 0.1),
        ("scaled by 10", lambda x, s: x * 10),
        ("scaled by 1000", lambda x, s: x * 1000),
        ("shifted by +1", lambda x, s: x + 1),
        ("shifted by -1", lambda x, s: x - 1),
        ("shifted by +10", lambda x, s: x + 10),
        ("shifted by -10", lambda x, s: x - 10),
        ("pushed to the low end", lambda x, s: ends(s)[0] + (x - ends(s)[0]) * 0.1),
        ("pushed to the high end", lambda x, s: ends(s)[1] - (ends(s)[1] - x) * 0.1),
    ]
    for names in groups:
        for label, fn in steps:
            where = "all inputs" if names is floats and len(floats) > 1 else ", ".join(names)
            yield transform(names, f"{where} {label}", fn)
        if names is floats:
            # Opposite ends: the largest differences between arguments (y_true vs y_pred).
            for low in floats:
                for high in floats:
                    if low != high:
                        _, args = transform([low], "", steps[0][1])
                        _, args = transform([high], "", steps[1][1], args)
                        yield f"{low} low, {high} high", args
    for seed in range(100, 100 + seeds):
        yield f"random draw (seed {seed})", draw(specs, seed)


def tensor_slots(
    specs: Mapping[str, Spec],
) -> dict[str, tuple[str, str | int | None, TensorSpec]]:
    """`shown name -> (parameter, dict key, list position or None, spec)` of
    every tensor input."""
    slots: dict[str, tuple[str, str | int | None, TensorSpec]] = {}
    for name, spec in specs.items():
        if isinstance(spec, TensorSpec):
            slots[name] = (name, None, spec)
        elif isinstance(spec, DictSpec):
            for key, entry in spec.entries:
                slots[f"{name}[{key!r}]"] = (name, key, entry)
        elif isinstance(spec, SequenceSpec):
            for position, element in enumerate(spec.elements):
                if isinstance(element, TensorSpec):
                    slots[f"{name}[{position}]"] = (name, position, element)
    return slots


def short_batch(specs: Mapping[str, Spec]) -> tuple[dict[str, Spec], int, int] | None:
    """The same specifications with a shorter first dimension, like the last
    batch of an epoch: (specs, full size, short size). None when the tensor
    inputs (also those inside a dict) do not share a first dimension of at
    least 2."""
    tensors = {n: s for n, (_, _, s) in tensor_slots(specs).items() if s.shape}
    leading = {s.shape[0] for s in tensors.values()}
    if len(leading) != 1 or (full := leading.pop()) < 2:
        return None
    short = max(1, (full - 1) // 2)

    def shorter(spec: TensorSpec) -> TensorSpec:
        return dataclasses.replace(spec, shape=(short, *spec.shape[1:])) if spec.shape else spec

    out = dict(specs)
    for name, spec in specs.items():
        if isinstance(spec, TensorSpec):
            out[name] = shorter(spec)
        elif isinstance(spec, DictSpec):
            out[name] = DictSpec(tuple((k, shorter(v)) for k, v in spec.entries))
        elif isinstance(spec, SequenceSpec):
            out[name] = SequenceSpec(
                tuple(shorter(e) if isinstance(e, TensorSpec) else e for e in spec.elements)
            )
    return out, full, short


def specs_from_signature(signature: Any, function: Any) -> dict[str, Spec] | None:
    """Specifications from a `tf.function`'s `input_signature`: its dtypes
    and shapes, `None` dimensions filled in (8 for the first, 4 after);
    floats drawn in [0, 1]. None when the signature holds anything but
    `tf.TensorSpec`s."""
    params = [
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(signature) > len(params):
        return None
    specs: dict[str, Spec] = {}
    for name, tensor_spec in zip(params, signature, strict=False):
        dtype = getattr(getattr(tensor_spec, "dtype", None), "name", None)
        shape = getattr(tensor_spec, "shape", None)
        if dtype not in DTYPES or shape is None or shape.rank is None:
            return None
        dims = tuple(
            d if d is not None else (8 if i == 0 else 4) for i, d in enumerate(shape.as_list())
        )
        is_float = dtype.startswith(("float", "bfloat"))
        specs[name] = TensorSpec(
            dtype, dims, 0.0 if is_float else None, 1.0 if is_float else None, strict=False
        )
    return specs
