"""`sys.stdout.write(text)` / `sys.stderr.write(text)` as the `print` they are.

A write of text to a standard stream is `print(text, end="", file=stream)`:
the same characters, on the same stream, with no separator and no line end
added. TFR103 reads such a write as that `print`, so its rendering of
formatted strings (`%`, `str.format`, f-strings with format specs) into
`tf.print` arguments is the one `print` has, and the `tf.print` it writes
keeps `end=""` and the stream (`output_stream=sys.stdout` / `sys.stderr`).

What differs from `print` is what the argument may be: `write` takes one
string, so the only text the rewrite can show faithfully is a formatted
string it can split (an f-string, `"..." % x`, `"...".format(x)`); a string
Python builds otherwise from a tensor (`describe(loss)`) is refused, where
`print` would have handed the value to `tf.print` as it is.
"""

from __future__ import annotations

import libcst as cst

from tfrewrite.facts.context import RuleContext

# The methods that write text to a standard stream, by qualified name.
STREAM_WRITES = {"sys.stdout.write": "stdout", "sys.stderr.write": "stderr"}


def written_stream(ctx: RuleContext, call: cst.Call) -> str | None:
    """ "stdout" or "stderr" when `call` writes to that standard stream
    (`sys.stdout.write(...)`, any spelling of the `sys` import, `from sys
    import stdout`), else None."""
    if not isinstance(call.func, cst.Attribute) or call.func.attr.value != "write":
        return None
    return STREAM_WRITES.get(ctx.names.qualified_name(call.func) or "")


def as_print(call: cst.Call) -> cst.Call | None:
    """The `print(text, end="", file=<stream>)` a stream write is, or None when
    the write is not called with exactly one positional argument. The
    argument and the stream are the write's own nodes, so the facts of the
    file (which values are tensors, what `sys.stdout` names) hold for them."""
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    assert isinstance(call.func, cst.Attribute)
    no_space = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
    return cst.Call(
        func=cst.Name("print"),
        args=[
            cst.Arg(call.args[0].value),
            cst.Arg(cst.SimpleString('""'), keyword=cst.Name("end"), equal=no_space),
            cst.Arg(call.func.value, keyword=cst.Name("file"), equal=no_space),
        ],
    )
