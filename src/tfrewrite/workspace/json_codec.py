"""Dataclasses to JSON values and back, driven by their type hints.

The cache stores pass-1 indexes and check results between runs. A format
that can name a class to build (pickle) runs whatever a planted file asks
for; JSON cannot, and this codec adds no way to: it decodes a value only as
the type its field declares, walking `dataclasses.fields` with their
resolved hints. No name read from the data is ever looked up or imported.
The dataclasses a codec accepts are those reachable from its root types
through field hints (the allowlist); any other type is refused when the
codec is built or when a value is encoded.

Supported hints: `str`, `int`, `float`, `bool`, `None`, `Any` (JSON scalars
only), enums (by value), `list[T]`, `tuple[T, ...]`, fixed `tuple[A, B]`,
`set[T]`, `frozenset[T]` and the abstract `Set[T]` (decoded as a frozenset),
`dict[K, V]` (an object for `str` keys, else a list of pairs), `X | None`
and unions of scalars, and nested allowed dataclasses (stored as lists in
field order). A value that does not have the shape its type says raises
`DecodeError`: the caller treats it as a miss, never as data.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Set
from typing import Any

Encoder = Callable[[Any], Any]
Decoder = Callable[[Any], Any]

_SCALARS: tuple[type, ...] = (str, int, float, bool)
_EMPTY_FROZENSET: frozenset[Any] = frozenset()
# The JSON value types a scalar hint accepts: containers of these are
# checked by one pass in C instead of a call per item.
_SCALAR_TYPES: dict[Any, set[type]] = {str: {str}, int: {int}, bool: {bool}, float: {float, int}}


class DecodeError(ValueError):
    """JSON data that is not a value of the type it is decoded as."""


class EncodeError(TypeError):
    """A value the codec cannot store (a type outside its allowlist)."""


class Codec:
    """Encoder and decoder for a closed set of dataclasses: `roots` and
    every dataclass their field hints reach."""

    def __init__(self, *roots: type) -> None:
        self._encoders: dict[Any, Encoder] = {}
        self._decoders: dict[Any, Decoder] = {}
        self.allowed: frozenset[type] = frozenset(_reachable(roots))
        for root in roots:
            self.encoder(root)
            self.decoder(root)

    def encode(self, value: Any, hint: Any) -> Any:
        return self.encoder(hint)(value)

    def decode(self, data: Any, hint: Any) -> Any:
        try:
            return self.decoder(hint)(data)
        except DecodeError:
            raise
        except (TypeError, ValueError, KeyError, AttributeError) as err:
            raise DecodeError(str(err)) from None

    # -- building the converters ------------------------------------------------------
    def encoder(self, hint: Any) -> Encoder:
        found = self._encoders.get(hint)
        if found is None:
            # A placeholder first: a dataclass may (indirectly) hold itself.
            self._encoders[hint] = lambda value: self._encoders[hint](value)
            found = self._encoders[hint] = self._build_encoder(hint)
        return found

    def decoder(self, hint: Any) -> Decoder:
        found = self._decoders.get(hint)
        if found is None:
            self._decoders[hint] = lambda data: self._decoders[hint](data)
            found = self._decoders[hint] = self._build_decoder(hint)
        return found

    def _build_encoder(self, hint: Any) -> Encoder:
        if hint is Any:
            return _encode_any
        if hint is type(None):
            return _expect_none
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return _enum_encoder(hint)
        if hint in _SCALARS:
            return _scalar_checker(hint)
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return self._dataclass_encoder(hint)
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin in (typing.Union, types.UnionType):
            return self._union_encoder(args)
        if origin in (list, tuple, set, frozenset, Set):
            if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
                items = [self.encoder(a) for a in args]
                return lambda value: [e(v) for e, v in zip(items, value, strict=True)]
            item = self.encoder(args[0])
            return lambda value: [item(v) for v in value]
        if origin is dict:
            key, val = self.encoder(args[0]), self.encoder(args[1])
            if args[0] is str:
                return lambda value: {key(k): val(v) for k, v in value.items()}
            return lambda value: [[key(k), val(v)] for k, v in value.items()]
        raise EncodeError(f"no JSON form for {hint!r}")

    def _build_decoder(self, hint: Any) -> Decoder:
        if hint is Any:
            return _decode_any
        if hint is type(None):
            return _expect_none
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return hint
        if hint in _SCALARS:
            return _scalar_checker(hint)
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return self._dataclass_decoder(hint)
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin in (typing.Union, types.UnionType):
            return self._union_decoder(args)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            items = [self.decoder(a) for a in args]

            def fixed_tuple(data: Any) -> tuple[Any, ...]:
                if not isinstance(data, list) or len(data) != len(items):
                    raise DecodeError(f"expected a list of {len(items)} items")
                return tuple(d(v) for d, v in zip(items, data, strict=True))

            return fixed_tuple
        if origin in (list, tuple, set, frozenset, Set):
            item = self.decoder(args[0])
            build = frozenset if origin is Set else origin
            plain = _SCALAR_TYPES.get(args[0])

            def sequence(data: Any) -> Any:
                if not isinstance(data, list):
                    raise DecodeError(f"expected a list for {hint!r}")
                if not data and build is frozenset:
                    return _EMPTY_FROZENSET
                if plain is not None and set(map(type, data)) <= plain:
                    return build(data)  # checked in C: fast; a copy, never the input
                return build([item(v) for v in data])

            return sequence
        if origin is dict:
            key, val = self.decoder(args[0]), self.decoder(args[1])
            if args[0] is str:
                plain = _SCALAR_TYPES.get(args[1])

                def str_mapping(data: Any) -> dict[Any, Any]:
                    if not isinstance(data, dict):
                        raise DecodeError("expected an object")
                    if plain is not None and set(map(type, data.values())) <= plain:
                        return dict(data)
                    return {k: val(v) for k, v in data.items()}

                return str_mapping

            def pair_mapping(data: Any) -> dict[Any, Any]:
                if not isinstance(data, list):
                    raise DecodeError("expected a list of pairs")
                out = {}
                for pair in data:
                    if not isinstance(pair, list) or len(pair) != 2:
                        raise DecodeError("expected a [key, value] pair")
                    out[key(pair[0])] = val(pair[1])
                return out

            return pair_mapping
        raise EncodeError(f"no JSON form for {hint!r}")

    def _dataclass_encoder(self, cls: type) -> Encoder:
        if cls not in self.allowed:
            raise EncodeError(f"{cls.__qualname__} is not among the codec's dataclasses")
        fields = [(name, self.encoder(hint)) for name, hint in _field_hints(cls)]

        def encode(value: Any) -> list[Any]:
            # A list in field order, not an object: the cache holds hundreds
            # of thousands of records, and their field names would be most
            # of its bytes and of the time spent reading it.
            if type(value) is not cls:
                raise EncodeError(f"expected {cls.__qualname__}, got {type(value).__qualname__}")
            return [enc(getattr(value, name)) for name, enc in fields]

        return encode

    def _dataclass_decoder(self, cls: type) -> Decoder:
        if cls not in self.allowed:
            raise EncodeError(f"{cls.__qualname__} is not among the codec's dataclasses")
        init = {f.name for f in dataclasses.fields(cls) if f.init}
        fields = [(name, name in init, self.decoder(hint)) for name, hint in _field_hints(cls)]

        count = len(fields)
        if all(in_init for _, in_init, _ in fields) and not any(
            f.kw_only for f in dataclasses.fields(cls)
        ):
            # Every field is a parameter of `__init__`, in field order: pass
            # them by position (most records; the fastest way to build them).
            decoders = [dec for _, _, dec in fields]

            def decode_positional(data: Any) -> Any:
                if type(data) is not list or len(data) != count:
                    raise DecodeError(f"expected the {count} fields of {cls.__qualname__}")
                return cls(*[dec(item) for dec, item in zip(decoders, data, strict=True)])

            return decode_positional

        def decode(data: Any) -> Any:
            if not isinstance(data, list) or len(data) != count:
                raise DecodeError(f"expected the {count} fields of {cls.__qualname__}")
            pairs = list(zip(fields, data, strict=True))
            arguments = {name: dec(item) for (name, in_init, dec), item in pairs if in_init}
            value = cls(**arguments)
            for (name, in_init, dec), item in pairs:
                if not in_init:
                    object.__setattr__(value, name, dec(item))
            return value

        return decode

    def _union_encoder(self, members: tuple[Any, ...]) -> Encoder:
        structured = _structured_member(members)
        if structured is None:
            checks = [self.encoder(m) for m in members]

            def scalar_union(value: Any) -> Any:
                for check in checks:
                    try:
                        return check(value)
                    except EncodeError:
                        continue
                raise EncodeError(f"{value!r} is none of {members!r}")

            return scalar_union
        inner = self.encoder(structured)
        return lambda value: None if value is None else inner(value)

    def _union_decoder(self, members: tuple[Any, ...]) -> Decoder:
        structured = _structured_member(members)
        if structured is None:
            checks = [self.decoder(m) for m in members]

            def scalar_union(data: Any) -> Any:
                for check in checks:
                    try:
                        return check(data)
                    except DecodeError:
                        continue
                raise DecodeError(f"{data!r} is none of {members!r}")

            return scalar_union
        inner = self.decoder(structured)
        return lambda data: None if data is None else inner(data)


def _structured_member(members: tuple[Any, ...]) -> Any | None:
    """The one non-scalar member of a union (`X` of `X | None`), or None
    for a union of scalars. JSON cannot tell two structured members apart
    without a tag, so such a union is refused."""
    others = [m for m in members if m is not type(None)]
    structured = [m for m in others if m not in _SCALARS]
    if not structured:
        return None
    if len(others) != 1:
        raise EncodeError(f"a union of {members!r} has no unambiguous JSON form")
    return structured[0]


def _field_hints(cls: type) -> list[tuple[str, Any]]:
    hints = typing.get_type_hints(cls)
    return [(f.name, hints[f.name]) for f in dataclasses.fields(cls)]


def _reachable(roots: tuple[type, ...]) -> set[type]:
    """The dataclasses `roots` hold, through any nesting of field hints."""
    found: set[type] = set()
    stack: list[Any] = list(roots)
    while stack:
        hint = stack.pop()
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            if hint in found:
                continue
            found.add(hint)
            stack.extend(h for _, h in _field_hints(hint))
        else:
            stack.extend(typing.get_args(hint))
    return found


def _scalar_checker(kind: type) -> Callable[[Any], Any]:
    """Scalars pass through unchanged, if they are of their type: `bool` is
    an `int` in Python, not in a field declared `int`."""

    def check(value: Any) -> Any:
        if type(value) is kind or (kind is float and type(value) is int):
            return value
        raise _Mismatch(f"expected {kind.__name__}, got {type(value).__name__}")

    return check


class _Mismatch(DecodeError, EncodeError):
    """A scalar of another type: a decode and an encode error alike, so a
    union of scalars tries its next member either way."""


def _expect_none(value: Any) -> None:
    if value is not None:
        raise _Mismatch(f"expected null, got {type(value).__name__}")
    return None


def _enum_encoder(kind: type[enum.Enum]) -> Encoder:
    def encode(value: Any) -> Any:
        if not isinstance(value, kind):
            raise _Mismatch(f"expected {kind.__name__}, got {type(value).__name__}")
        return value.value

    return encode


def _encode_any(value: Any) -> Any:
    """`Any` holds only what JSON holds as it is: anything else would come
    back as another type."""
    if value is None or type(value) in _SCALARS:
        return value
    raise EncodeError(f"a field typed Any holds a {type(value).__qualname__}")


def _decode_any(data: Any) -> Any:
    if data is None or type(data) in _SCALARS:
        return data
    raise DecodeError("a field typed Any holds a structure")
