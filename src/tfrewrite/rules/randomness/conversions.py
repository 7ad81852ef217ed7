"""Converted samples: the dtype a NumPy conversion of a plain sample is cast to.

`noise.astype(np.float32)` (or `np.asarray(noise, np.float32)`,
`np.float32(noise)`) gives NumPy's sample a dtype of its own, but the result
is still a NumPy array, and an array adapts to the tensor it meets: eagerly,
`x + noise.astype(np.float32)` converts the float32 array to `x`'s dtype
(float64 for a float64 `x`). The rewrite makes the sample a tensor, and
`tf.cast(noise, tf.float32)` does not adapt: `x + b` raises `TypeError` for a
float64 `x`. So, asking `ValueUses` where the converted value goes
(`Use.converted`, `Use.dtype`):

- where every use of the converted value meets a tensor `x` in arithmetic
  or a comparison (at once, after Python numbers, through names), the
  conversion casts to `x.dtype`, as eager converted it there; it is dropped
  when the sample is already drawn in `x.dtype`;
- where its dtype matters otherwise (returned, given to an op), the
  conversion's own dtype is kept, as it is today;
- a converted value that meets a tensor and also goes where the
  conversion's dtype matters, or meets tensors of different dtypes, cannot
  be given one dtype: the fix is unsafe, with the reason (`converted_reason`).

Only float samples converted to float32 or float64 are recast: the value
then differs from eager's at most by float32 rounding of a random draw. An
integer target truncates, an integer sample can exceed float32's exact
integers and float16 rounds visibly: those keep the conversion, and the fix
is unsafe where they meet a tensor. Conversions `tf.constant(noise, dtype=d)`
make a tensor already, which does not adapt either: they keep their dtype.
Compared samples (masks) are `masks.py`'s.
"""

from __future__ import annotations

from tfrewrite.rewrite.dtypes import FLOAT
from tfrewrite.rewrite.traced_calls import Refusal
from tfrewrite.rewrite.value_uses import TF_WRAPPERS, Use, UseKind, wrapper_dtype
from tfrewrite.rules.randomness.sample_writer import SampleWriter

# Conversion targets whose rounding of a float sample is no visible change.
_RECASTABLE = frozenset({"float32", "float64"})


def cast_conversions(writer: SampleWriter) -> None:
    """Cast the one NumPy conversion of a plain float sample to the dtype of
    the tensor its converted value meets (`writer.recast`), or drop it
    (`writer.dropped`) when the sample is drawn in that dtype; leave it when
    the converted value goes anywhere else. Call after the sample is written
    (`writer.drawn_kind` is then known)."""
    conversions = numpy_conversions(writer)
    if len(conversions) != 1 or writer.drawn_kind != FLOAT:
        return
    conversion = conversions[0]
    assert conversion.wrapper is not None
    try:
        dtype = wrapper_dtype(conversion.wrapper, writer.ctx, writer.tf)
    except Refusal:
        return
    if dtype is None or dtype.tf_name not in _RECASTABLE:
        return
    name = writer.met_dtype_name(_converted_uses(writer))
    if name is None:
        return
    target = f"{name}.dtype"
    context = writer.context_dtype()
    if context is not None and context.code == target:
        writer.dropped.add(id(conversion.wrapper.call))
    else:
        writer.recast[id(conversion.wrapper.call)] = target


def converted_reason(writer: SampleWriter) -> str | None:
    """Why a plain sample converted by NumPy is not proven to compute as
    eager did (None: proven, or no such conversion): its converted value
    meets a tensor, whose dtype NumPy's array took, in the conversion's
    own dtype."""
    conversions = numpy_conversions(writer)
    if not conversions:
        return None
    cast: set[str] = set()
    if len(conversions) == 1:
        assert conversions[0].wrapper is not None
        key = id(conversions[0].wrapper.call)
        target = writer.recast.get(key)
        if key in writer.dropped:
            context = writer.context_dtype()
            target = context.code if context is not None else None
        if target is None:
            # `noise.astype(x.dtype)`: already the dtype of the tensor `x` it meets.
            try:
                own = wrapper_dtype(conversions[0].wrapper, writer.ctx, writer.tf)
            except Refusal:
                own = None
            target = own.code if own is not None else None
        if target is not None and target.endswith(".dtype"):
            cast.add(target.removesuffix(".dtype"))
    for use in _converted_uses(writer):
        if use.kind is not UseKind.TENSOR or use.meets is None:
            continue
        if writer.dtype_name(use.meets) in cast:
            continue
        dtype = use.dtype if use.dtype not in (None, "unknown") else "converted"
        article = "an" if dtype[0] in "aeiou" else "a"
        return (
            f"{use.subject('the sample')} {use.reason} as {article} {dtype} array: eager "
            f"converts NumPy's array to the tensor's dtype there, {article} {dtype} tensor is not "
            f"converted; {_why_kept(writer, conversions)}"
        )
    return None


def _why_kept(writer: SampleWriter, conversions: list[Use]) -> str:
    """Why the conversion was not cast to the tensor's dtype (a clause)."""
    if len(conversions) > 1:
        return "the sample is converted more than once"
    wrapper = conversions[0].wrapper
    assert wrapper is not None
    try:
        dtype = wrapper_dtype(wrapper, writer.ctx, writer.tf)
    except Refusal:
        dtype = None
    if writer.drawn_kind != FLOAT or dtype is None or dtype.tf_name not in _RECASTABLE:
        return (
            "the conversion may change the values (truncate or round them) before eager "
            "converts them again"
        )
    return (
        "the converted sample also goes where the conversion's dtype matters, or meets "
        "values of other dtypes"
    )


def numpy_conversions(writer: SampleWriter) -> list[Use]:
    """The conversions of the plain (not compared) sample that name a dtype
    and keep a NumPy array (`.astype(d)`, `np.asarray(v, d)`, `np.float32(v)`),
    other than the one folded into the sample."""
    found = []
    for use in writer.uses:
        wrapper = use.wrapper
        if use.kind is not UseKind.WRAPPER or use.boolean or wrapper is None:
            continue
        if wrapper.dtype is None or writer.ctx.names.qualified_name(wrapper.call.func) in (
            TF_WRAPPERS
        ):
            continue
        found.append(use)
    return found


def _converted_uses(writer: SampleWriter) -> list[Use]:
    """Uses of the plain sample after a NumPy conversion named its dtype."""
    return [u for u in writer.uses if u.converted and not u.boolean]
