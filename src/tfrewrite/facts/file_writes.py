"""Python file writes in a function body: what runs once, at trace time,
when the function is traced.

A write through Python's file objects is not an op: traced, `open(path,
"a").write(...)`, `json.dump(record, fh)` or `np.save(path, value)` runs
while tracing and never again, so the file gets one record per trace, not
one per call. (TensorFlow's own writers, `tf.io.write_file`, `tf.print(...,
output_stream="file://...")` and `tf.summary`, are ops and run on every
call: they are not file writes here.)

A write is recognised by what is called, not by the receiver's name:

- `open(...)` (or `io.open`, `tf.io.gfile.GFile`) with a literal mode that
  writes (`"w"`, `"a"`, `"x"` or `"+"`); a mode that is not a literal, or
  none (reading), is not one;
- `json.dump` / `pickle.dump` (they write to the file object they are
  given), unless that object is a file the same function opened for
  writing (the `open` is the write then, reported once);
- NumPy's savers (`np.save`, `np.savez`, `np.savez_compressed`, `np.savetxt`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst

    from tfrewrite.facts.names import NameResolver

# Callables that open a file, and the index of their positional `mode`.
_OPENERS = {
    "open": 1,
    "io.open": 1,
    "tensorflow.io.gfile.GFile": 1,
    "tensorflow.gfile.GFile": 1,
    "tensorflow.compat.v1.gfile.GFile": 1,
}
# Writers whose second positional argument (or `fp=`/`file=`) is the file object.
_DUMPERS = frozenset({"json.dump", "pickle.dump"})
_SAVERS = frozenset({"numpy.save", "numpy.savez", "numpy.savez_compressed", "numpy.savetxt"})
_WRITING_MODES = frozenset("wax+")
# What a function calls (pass 1's dotted names) when it may write a file:
# the pre-parse check asks this before any LibCST parse.
WRITER_NAMES = frozenset({*_OPENERS, *_DUMPERS, *_SAVERS})


@dataclass(frozen=True)
class FileWrite:
    """A call that writes a file through Python: the node, and what it does
    in words ("opens a file for writing")."""

    node: cst.Call
    what: str


def _callee(call: cst.Call, resolver: NameResolver, shadowed: set[str]) -> str | None:
    """The qualified name of what `call` calls; a bare builtin name (`open`)
    when neither imported nor bound in the file."""
    import libcst as cst  # not at import time: the pre-parse check reads WRITER_NAMES

    if isinstance(call.func, cst.Name):
        name = call.func.value
        if name == "open" and name not in resolver.imports and name not in shadowed:
            return name
    return resolver.qualified_name(call.func)


def _argument(call: cst.Call, index: int, keywords: tuple[str, ...]) -> cst.BaseExpression | None:
    """The argument bound to the parameter at positional `index` or named
    one of `keywords`; None when absent or when a `*args`/`**kwargs` may
    bind it."""
    positional = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if positional == index:
                return arg.value
            positional += 1
        elif arg.keyword.value in keywords:
            return arg.value
    return None


def writing_mode(call: cst.Call, index: int) -> str | None:
    """The literal mode an opener is called with, when it writes."""
    import libcst as cst

    mode = _argument(call, index, ("mode",))
    if isinstance(mode, cst.SimpleString):
        text = mode.evaluated_value
        if isinstance(text, str) and _WRITING_MODES & set(text):
            return text
    return None


def file_writes(
    function: cst.FunctionDef, resolver: NameResolver, shadowed: set[str]
) -> Iterator[FileWrite]:
    """The Python file writes of `function`'s own body (not of functions
    nested in it), in source order. `shadowed` are names the file binds
    itself (a local `open` is not the builtin)."""
    import libcst as cst

    from tfrewrite.facts.walk import iter_nodes

    opened: set[str] = set()  # names bound to a file opened for writing here
    found: list[FileWrite] = []
    for node in iter_nodes(function.body, into_functions=False):
        if isinstance(node, cst.WithItem) and isinstance(node.item, cst.Call):
            if _opens_for_writing(node.item, resolver, shadowed) and node.asname is not None:
                if isinstance(node.asname.name, cst.Name):
                    opened.add(node.asname.name.value)
        elif isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
            if _opens_for_writing(node.value, resolver, shadowed):
                opened.update(
                    t.target.value for t in node.targets if isinstance(t.target, cst.Name)
                )
        if not isinstance(node, cst.Call):
            continue
        callee = _callee(node, resolver, shadowed)
        if callee in _OPENERS:
            mode = writing_mode(node, _OPENERS[callee])
            if mode is not None:
                found.append(FileWrite(node, f'opens a file for writing (mode "{mode}")'))
        elif callee in _DUMPERS:
            target = _argument(node, 1, ("fp", "file"))
            if not (isinstance(target, cst.Name) and target.value in opened):
                found.append(FileWrite(node, "writes to a Python file object"))
        elif callee in _SAVERS:
            found.append(FileWrite(node, "writes a file"))
    yield from found


def _opens_for_writing(call: cst.Call, resolver: NameResolver, shadowed: set[str]) -> bool:
    callee = _callee(call, resolver, shadowed)
    return callee in _OPENERS and writing_mode(call, _OPENERS[callee]) is not None
