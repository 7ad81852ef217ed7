"""Compared samples (masks): the dtype a comparison of a sample must be cast to.

`np.random.rand(n) < p` is a NumPy boolean array, and NumPy gives it a
number's dtype wherever the code computes with it: multiplied with a tensor
`x` it converts to `x`'s dtype, multiplied with `1.0` it becomes float64,
`.astype(d)` makes it `d`. A boolean tensor does none of that: arithmetic on
it fails, or stays boolean (`keep * 0.5` converts `0.5` to `False`). So the
rewrite casts the comparison where NumPy converted it, asking `ValueUses`
what dtype the value reaches each use in (`Use.dtype`):

- a boolean in arithmetic (`x * keep`, `keep * 1.0`) casts the comparison:
  to the dtype of the tensor the mask meets, at once or after the numbers
  (`tf.cast(tf.random.uniform([n]) < p, x.dtype)`), or else to NumPy's
  float64 / int64 where the mask keeps that dtype (it is returned);
- a conversion of the comparison (`(... < p).astype("float32")`) is the
  cast already (`tf.cast(tf.random.uniform([n]) < p, tf.float32)`); when
  the converted mask then meets a tensor `x` in arithmetic, NumPy's array
  took `x`'s dtype there, so the cast is to `x.dtype` (a tensor in the
  conversion's own dtype would clash with a float64 `x`);
- a use that needs the boolean itself (`tf.where(keep, ...)`) keeps it.

What cannot be cast to one dtype is refused, with the reason.
"""

from __future__ import annotations

import libcst as cst

from tfrewrite.rewrite.traced_calls import Refusal, SampleSite
from tfrewrite.rewrite.value_uses import Use, UseKind
from tfrewrite.rules.randomness.sample_writer import ARITHMETIC, SampleWriter

_MASK = "the comparison of the sample"


def cast_masks(site: SampleSite, writer: SampleWriter) -> None:
    """Set `writer.mask_cast` (the comparison cast where a boolean meets
    arithmetic) or `writer.recast` (a conversion of the comparison cast to
    the tensor it then meets); `Refusal` when no one dtype fits."""
    uses = writer.uses
    as_boolean = [u for u in uses if u.boolean and u.dtype == "bool"]
    in_arithmetic = [u for u in as_boolean if _is_arithmetic(u.node)]
    if in_arithmetic:
        _cast_comparison(site, writer, as_boolean, in_arithmetic)
        return
    conversions = [u for u in as_boolean if u.kind is UseKind.WRAPPER and u.wrapper is not None]
    if len(conversions) == 1 and len(as_boolean) == 1:
        _recast_conversion(writer, conversions[0])


def _cast_comparison(
    site: SampleSite, writer: SampleWriter, as_boolean: list[Use], in_arithmetic: list[Use]
) -> None:
    """The comparison cast to one dtype for every use after it: the tensor's
    it meets in arithmetic (at once or after numbers), else NumPy's own for a
    boolean in arithmetic with numbers; refused when the boolean is also used
    as one, meets a value of unknown dtype, or the uses ask for two dtypes."""
    first = in_arithmetic[0]
    refusal = Refusal(
        f"{first.subject(_MASK)} {first.reason}: in arithmetic a NumPy boolean array "
        "converts to the other operand's dtype, a boolean tensor does not; wrap the "
        "comparison in `tf.cast`"
    )
    comparison = next((a for a in reversed(site.ancestors) if isinstance(a, cst.Comparison)), None)
    if comparison is None or len(in_arithmetic) != len(as_boolean):
        raise refusal
    promoted = [u for u in writer.uses if u.boolean and not u.converted and u.dtype != "bool"]
    met = [u for u in in_arithmetic if u.kind is UseKind.TENSOR]
    met += [u for u in promoted if u.kind is UseKind.TENSOR and u.meets is not None]
    if any(u.kind is UseKind.DTYPE and not _meets_number(writer, u) for u in in_arithmetic):
        raise refusal
    # Where the mask keeps NumPy's own dtype after the numbers (returned, given to an op).
    kept = {u.dtype for u in promoted if u.kind is UseKind.DTYPE and u.meets is None}
    names = {writer.dtype_name(u.meets) for u in met if u.meets is not None}
    if None in names or len(names) > 1 or (names and kept):
        raise refusal
    if names:
        name = names.pop()
        assert name is not None
        if not (all(not u.names for u in met) or writer.readable_at_site(name)):
            raise refusal
        writer.mask_cast = (comparison, f"{name}.dtype")
        return
    # Nothing reads a tensor's dtype: cast to the dtype NumPy computed in.
    dtypes = kept or {u.dtype for u in promoted}
    dtype = dtypes.pop() if len(dtypes) == 1 else None
    if dtype is None or dtype == "unknown":
        raise refusal
    writer.mask_cast = (comparison, f"{writer.tf}.{dtype}")


def _recast_conversion(writer: SampleWriter, conversion: Use) -> None:
    """`(<sample> < p).astype(d)` whose converted value meets tensors of
    one nameable dtype in arithmetic, and nothing that reads `d` itself:
    cast to that dtype, as NumPy's array was converted there."""
    assert conversion.wrapper is not None
    name = writer.met_dtype_name([u for u in writer.uses if u.boolean and u.converted])
    if name is not None:
        writer.recast[id(conversion.wrapper.call)] = f"{name}.dtype"


def retyped_reason(writer: SampleWriter) -> str | None:
    """Why a compared sample given a number's dtype on the way (converted,
    or a boolean in arithmetic with a number) is not proven to compute as
    NumPy's array did (None: proven): it meets a tensor whose dtype the cast
    is not known to be, a value of unknown dtype, or a `tf.*` op that would
    have converted NumPy's array to the dtype it needs."""
    cast = _cast_names(writer)
    for use in writer.uses:
        retyped = use.boolean and use.dtype != "bool"
        if not retyped or use.kind not in (UseKind.TENSOR, UseKind.DTYPE):
            continue
        subject = use.subject(_MASK)
        if use.meets is not None and not _meets_number(writer, use):
            if use.kind is UseKind.TENSOR and writer.dtype_name(use.meets) in cast:
                continue
            return (
                f"{subject} {use.reason} as a {use.dtype} array: NumPy's array takes the "
                f"other operand's dtype there, a {use.dtype} tensor does not"
            )
        if use.kind is UseKind.DTYPE and isinstance(use.node, cst.Call):
            return (
                f"{subject} {use.reason}: a host value adapts to the dtype the op needs, "
                "a tensor does not"
            )
    return None


def _cast_names(writer: SampleWriter) -> set[str | None]:
    """Names whose `.dtype` the rewrite casts the mask to."""
    dtypes = list(writer.recast.values())
    if writer.mask_cast is not None:
        dtypes.append(writer.mask_cast[1])
    return {d.removesuffix(".dtype") for d in dtypes if d.endswith(".dtype")}


def _meets_number(writer: SampleWriter, use: Use) -> bool:
    return use.meets is not None and writer.is_number(use.meets)


def _is_arithmetic(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, ARITHMETIC)
    return isinstance(node, cst.AugAssign)
