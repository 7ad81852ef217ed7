#!/usr/bin/env python3
"""Scaffold a new tfrewrite rule in a family folder.

    python scripts/add_rule.py --family python_state --code TFR206 \\
        --name some-hazard --module some_hazard

writes `src/tfrewrite/rules/<family>/<module>.py` (a `Rule` subclass with its
code, name, placeholder docs and examples, and a `check` that reports nothing
yet) and appends the rule's `RuleSpec` to the family's `__init__.py`. Those are
the two files a rule is made of: the registry, selection, fix order, docs and
the examples-as-tests pick the rule up from them. What is left to fill in is
listed at the end of the run (and in CONTRIBUTING.md).

The script reads source only (`ast`): it imports nothing of tfrewrite, so it
works on a package whose other rules are half edited. `--root` points it at
another copy of the package (the tests scaffold into a temporary one).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

_DEFAULT_ROOT = Path(__file__).resolve().parent.parent / "src" / "tfrewrite"
_CODE = re.compile(r"TFR[1-9]\d{2,}")
_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_MODULE = re.compile(r"[a-z_][a-z0-9_]*")

_TEMPLATE = '''\
"""{code}: TODO say in one line what the rule finds in traced code."""

from __future__ import annotations

from collections.abc import Iterator

from tfrewrite.facts.context import RuleContext
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.base import Invalid, Rule, Valid


class {class_name}(Rule):
    code = "{code}"
    name = "{name}"
    summary = "TODO one line: what is found and what goes wrong under tracing"
    fix_applicability = Applicability.NONE
    # The page's `## Example` is the first `Invalid` example below (and its
    # `after`, once there is a fix): the explanation holds no example.
    explanation = """
    ## What it does
    TODO: what the rule finds, in which traced contexts.

    ## Why is this bad?
    TODO: what the code does eagerly and what changes once traced (the error
    message or the frozen value, measured on a TensorFlow version).

    ## Fix safety
    There is no automatic fix yet: TODO say what the finding tells the user to
    do, and, once there is a fix, when it is safe, when unsafe, and when it is
    refused (and why).
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            @tf.function
            def step(x):
                return x  # TODO: the hazard this rule reports
            """,
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function
            def step(x):
                return x
            """,
            note="TODO: the closest code that must not be reported",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        """TODO: report each hazard with `yield Violation(node, message)`,
        asking the facts through `ctx` (`ctx.traced_functions()`, `ctx.names`,
        `ctx.tensors(function)`) rather than deriving them again."""
        yield from ()


RULES = ({class_name},)
'''

_SPEC = """\
    RuleSpec(
        code="{code}",
        module="{module}",
        scope=None,  # TODO: a pre-parse check in scopes.py (None parses every file)
        relevance=None,  # TODO: what check's pruned parse keeps (None: the whole file)
    ),
"""


class ScaffoldError(Exception):
    """A request the script refuses, with the reason."""


def _families(rules_dir: Path) -> list[str]:
    return sorted(
        p.name for p in rules_dir.iterdir() if p.is_dir() and (p / "__init__.py").is_file()
    )


def _declared_codes(rules_dir: Path) -> dict[str, str]:
    """Each code some family's `RULES` declares, with the family."""
    found: dict[str, str] = {}
    for family in _families(rules_dir):
        tree = ast.parse((rules_dir / family / "__init__.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called(node) == "RuleSpec":
                code = _spec_code(node)
                if code is not None:
                    found[code] = family
    return found


def _declared_names(rules_dir: Path) -> dict[str, str]:
    """Each rule name (`name = "..."` in a class that sets `code`), with its
    code."""
    found: dict[str, str] = {}
    for path in sorted(rules_dir.glob("*/*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                values = _class_strings(node)
                if "code" in values and "name" in values:
                    found[values["name"]] = values["code"]
    return found


def _called(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _spec_code(call: ast.Call) -> str | None:
    values = [k.value for k in call.keywords if k.arg == "code"] or call.args[:1]
    if values and isinstance(values[0], ast.Constant) and isinstance(values[0].value, str):
        return values[0].value
    return None


def _class_strings(node: ast.ClassDef) -> dict[str, str]:
    found = {}
    for statement in node.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        ):
            found[statement.targets[0].id] = statement.value.value
    return found


def class_name(name: str) -> str:
    """`some-hazard` -> `SomeHazard`."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("-"))


def add_spec(init_source: str, code: str, module: str) -> str:
    """The family `__init__.py` with the rule's `RuleSpec` appended to its
    `RULES` tuple (and `RuleSpec` imported if it was not)."""
    tree = ast.parse(init_source)
    target = None
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "RULES" for t in statement.targets)
            and isinstance(statement.value, ast.Tuple)
        ):
            target = statement
    if target is None:
        raise ScaffoldError("the family's __init__.py has no `RULES = (...)` tuple")
    entry = _SPEC.format(code=code, module=module)
    lines = init_source.splitlines(keepends=True)
    value = target.value
    last = lines[value.end_lineno - 1]
    if last.strip() == ")" and value.lineno < value.end_lineno:
        # The usual layout, one entry after another and `)` on its own line.
        lines.insert(value.end_lineno - 1, entry)
        text = "".join(lines)
    else:
        # `RULES = ()` or a one-line tuple: lay it out one entry per line.
        elements = [ast.get_source_segment(init_source, e) or "" for e in value.elts]
        body = "".join(f"    {element},\n" for element in elements) + entry
        start = _offset(lines, value.lineno, value.col_offset)
        end = _offset(lines, value.end_lineno, value.end_col_offset)
        text = init_source[:start] + "(\n" + body + ")" + init_source[end:]
    if not _imports_rule_spec(tree):
        text = _add_import(text, "from tfrewrite.rules.registry import RuleSpec\n")
    return text


def _offset(lines: list[str], lineno: int, col: int) -> int:
    """Character offset of an `ast` position (columns count UTF-8 bytes)."""
    line = lines[lineno - 1]
    return sum(len(x) for x in lines[: lineno - 1]) + len(line.encode()[:col].decode())


def _imports_rule_spec(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.ImportFrom) and any(a.name == "RuleSpec" for a in node.names)
        for node in tree.body
    )


def _add_import(source: str, line: str) -> str:
    """`line` after the module's last top-level import, or, when it has
    none, after its docstring and a blank line."""
    tree = ast.parse(source)
    imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    lines = source.splitlines(keepends=True)
    if imports:
        lines.insert(imports[-1].end_lineno or 0, line)
    elif tree.body and isinstance(tree.body[0], ast.Expr):
        lines.insert(tree.body[0].end_lineno or 0, "\n" + line)
    else:
        lines.insert(0, line + "\n")
    return "".join(lines)


def scaffold(root: Path, family: str, code: str, name: str, module: str) -> list[Path]:
    """Write the rule module and register it; the two files written."""
    rules_dir = root / "rules"
    if not rules_dir.is_dir():
        raise ScaffoldError(f"{root} is not the tfrewrite package (no rules/ folder)")
    families = _families(rules_dir)
    if family not in families:
        raise ScaffoldError(f"no family `{family}`; the families are: {', '.join(families)}")
    if not _CODE.fullmatch(code):
        raise ScaffoldError(f"`{code}` is not a rule code (TFR followed by three digits or more)")
    if not _NAME.fullmatch(name):
        raise ScaffoldError(f"`{name}` is not a kebab-case rule name")
    if not _MODULE.fullmatch(module) or module in ("scopes", "__init__"):
        raise ScaffoldError(f"`{module}` cannot name the rule's module")
    declared = _declared_codes(rules_dir)
    if code in declared:
        raise ScaffoldError(f"{code} is already declared by the family `{declared[code]}`")
    names = _declared_names(rules_dir)
    if name in names:
        raise ScaffoldError(f"the name `{name}` is already {names[name]}'s")
    module_path = rules_dir / family / f"{module}.py"
    if module_path.exists():
        raise ScaffoldError(f"{module_path} already exists")
    init_path = rules_dir / family / "__init__.py"
    init_text = add_spec(init_path.read_text(encoding="utf-8"), code, module)
    module_path.write_text(
        _TEMPLATE.format(code=code, name=name, class_name=class_name(name)), encoding="utf-8"
    )
    init_path.write_text(init_text, encoding="utf-8")
    return [module_path, init_path]


_NEXT = """\
Next, in {folder}:
  1. {module}.py: write `check`, the examples (each Invalid must report, each
     Valid must not: tests/test_rule_examples.py runs them), the summary and
     the explanation's sections; set fix_applicability once there is a fix.
  2. scopes.py: a pre-parse check on pass-1 facts, set as the entry's `scope`.
  3. __init__.py: the entry's `relevance` (rules.registry.Relevance).
  4. python -m tfrewrite.docs   (the README's rules table)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", required=True, help="the family folder under rules/")
    parser.add_argument("--code", required=True, help="the rule code, such as TFR206")
    parser.add_argument("--name", required=True, help="the kebab-case rule name")
    parser.add_argument("--module", required=True, help="the module to write, without .py")
    parser.add_argument(
        "--root",
        type=Path,
        default=_DEFAULT_ROOT,
        help="the tfrewrite package folder (default: this clone's src/tfrewrite)",
    )
    args = parser.parse_args(argv)
    try:
        written = scaffold(args.root, args.family, args.code.upper(), args.name, args.module)
    except ScaffoldError as error:
        print(f"add_rule: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    print(_NEXT.format(folder=written[0].parent, module=args.module))
    return 0


if __name__ == "__main__":
    sys.exit(main())
