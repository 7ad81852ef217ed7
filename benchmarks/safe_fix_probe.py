"""Run hand-written adversarial cases through `tfrewrite fix` and execute
each one: the original eagerly against the fixed module traced, on the
probes the case lists. Prints one line a probe and a summary table.

    python benchmarks/safe_fix_probe.py [CASE_DIR] [--unsafe-fixes]

A case is a module with its hazard and `PROBES = [(function, args), ...]`;
the names in `RANDOM` draw random values and are compared by shape, dtype and
freshness (two calls differ when they differ eagerly), the others by value.
Outcomes: `equivalent`, `WRONG` (a different result), `CRASH` (the fixed code
raises where the original traced does not), `kept` (the fixed code raises as
the original does when traced: the fix did not remove that hazard),
`untouched` (no fix applies: the finding is reported only) and `invalid` (the
original itself raises eagerly: the case is wrong).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import itertools
import os
import sys
import tempfile
import types
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from tfrewrite.api import fix_source  # noqa: E402

CASES = Path(__file__).resolve().parent.parent / "tests" / "data" / "adversarial"
_counter = itertools.count()
# Calls of a random probe: eight equal draws of a three-way choice happen
# by chance once in 2,000 runs.
_DRAWS = 8


_FOLDER = Path(tempfile.mkdtemp(prefix="tfrewrite_probe_"))


def _load(source: str) -> types.ModuleType:
    """Import `source` from a file of its own: AutoGraph converts only
    functions whose source it can read, as it does in a real project."""
    name = f"tfrewrite_probe_{next(_counter)}"
    path = _FOLDER / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _numpy(value):
    if isinstance(value, (tuple, list)):
        return [_numpy(v) for v in value]
    if tf.is_tensor(value) or isinstance(value, tf.Variable):
        return value.numpy()
    return np.asarray(value)


def _leaves(value) -> list[np.ndarray]:
    value = _numpy(value)
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _difference(expected, actual, random: bool) -> str | None:
    """Why `actual` does not stand for `expected`, or None when it does."""
    want, got = _leaves(expected), _leaves(actual)
    if len(want) != len(got):
        return f"{len(got)} results where the original gives {len(want)}"
    for e, a in zip(want, got, strict=True):
        if e.shape != a.shape:
            return f"shape {a.shape} where the original gives {e.shape}"
        if e.dtype != a.dtype:
            return f"dtype {a.dtype} where the original gives {e.dtype}"
        if not random and not np.allclose(e, a, rtol=1e-5, atol=1e-6):
            return f"value {a.tolist()} where the original gives {e.tolist()}"
    return None


def _all_same(values: list) -> bool:
    first = _leaves(values[0])
    return all(
        all(np.array_equal(a, b) for a, b in zip(first, _leaves(v), strict=True))
        for v in values[1:]
    )


def _traced(module: types.ModuleType, name: str):
    """`name` of `module` as tracing runs it: its own `tf.function`, or one
    around it when a fix took the decorator off (a loss traced by its step)."""
    function = getattr(module, name)
    return function if hasattr(function, "get_concrete_function") else tf.function(function)


def _first_line(error: Exception) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("in user code", "File "))]
    return (useful[-1] if useful else "")[:200]


def probe_case(path: Path, unsafe: bool) -> list[tuple[str, str, str]]:
    """(outcome, probe, detail) for every probe of the case at `path`."""
    source = path.read_text()
    fixed = fix_source(source, path=str(path), unsafe_fixes=unsafe)
    if fixed == source:
        return [("untouched", path.stem, "no fix applies")]
    tf.config.run_functions_eagerly(True)
    try:
        original = _load(source)
    except Exception as error:
        return [("invalid", path.stem, f"{type(error).__name__}: {_first_line(error)}")]
    finally:
        tf.config.run_functions_eagerly(False)
    try:
        rewritten = _load(fixed)
    except Exception as error:  # the fixed module does not even import
        return [("CRASH", path.stem, f"{type(error).__name__}: {error}")]
    random = getattr(original, "RANDOM", set())
    results = []
    for index, (name, args) in enumerate(original.PROBES):
        label = f"{path.stem}.{name}#{index}"
        calls = _DRAWS if name in random else 1
        plain = getattr(getattr(original, name), "python_function", getattr(original, name))
        tf.config.run_functions_eagerly(True)
        try:
            expected = [plain(*args) for _ in range(calls)]
        except Exception as error:
            results.append(("invalid", label, f"{type(error).__name__}: {error}"))
            continue
        finally:
            tf.config.run_functions_eagerly(False)
        try:
            actual = [_traced(rewritten, name)(*args) for _ in range(calls)]
        except Exception as error:
            try:
                _traced(original, name)(*args)
            except Exception:
                results.append(("kept", label, "the original fails the same way when traced"))
                continue
            results.append(("CRASH", label, f"{type(error).__name__}: {_first_line(error)}"))
            continue
        why = _difference(expected[0], actual[0], name in random)
        if why is None and calls > 1 and not _all_same(expected) and _all_same(actual):
            why = "the same draw on every call, where the original draws afresh"
        results.append(("WRONG" if why else "equivalent", label, why or ""))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="?", type=Path, default=CASES)
    parser.add_argument("--unsafe-fixes", action="store_true")
    args = parser.parse_args()
    totals: collections.Counter[str] = collections.Counter()
    for path in sorted(args.cases.glob("*.py")):
        for outcome, label, detail in probe_case(path, args.unsafe_fixes):
            totals[outcome] += 1
            print(f"{outcome:<11} {label:<32} {detail}")
    print()
    print("outcome     probes")
    for outcome in ("equivalent", "WRONG", "CRASH", "kept", "untouched", "invalid"):
        print(f"{outcome:<11} {totals[outcome]}")
    return 1 if totals["WRONG"] or totals["CRASH"] or totals["invalid"] else 0


if __name__ == "__main__":
    sys.exit(main())
