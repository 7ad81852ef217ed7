"""The rule registry: each family declares its rules (`RuleSpec`), every list
of codes derives from those declarations, and `scripts/add_rule.py` adds a
rule that the registry, selection, docs and the examples-as-tests pick up
with no other edit."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tfrewrite import rules
from tfrewrite.rules import registry, rule_module, rule_specs

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "src" / "tfrewrite"
SCRIPT = REPO / "scripts" / "add_rule.py"


def _script():
    spec = importlib.util.spec_from_file_location("add_rule", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the declarations and the rule classes agree -------------------------------------


def test_each_spec_names_a_class_with_its_code_and_every_class_is_registered() -> None:
    by_module: dict[str, set[str]] = {}
    for spec in rule_specs():
        by_module.setdefault(rule_module(spec), set()).add(spec.code)
    for name, codes in by_module.items():
        classes = importlib.import_module(name).RULES
        assert {cls.code for cls in classes} == codes, name
    registered = {code for codes in by_module.values() for code in codes}
    assert registered == {rule.code for rule in rules.ALL_RULES}
    assert [rule.code for rule in rules.ALL_RULES] == [spec.code for spec in rule_specs()]


def test_every_family_module_listing_rules_is_registered() -> None:
    """A rule module (one with `RULES` of rule classes) that no entry names
    would be a rule nobody runs."""
    listed = set(rules.RULE_MODULES)
    for path in sorted((PACKAGE / "rules").glob("*/*.py")):
        if path.name in ("__init__.py", "scopes.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defines_rules = any(
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "RULES" for t in node.targets)
            for node in tree.body
        )
        name = f"tfrewrite.rules.{path.parent.name}.{path.stem}"
        assert defines_rules == (name in listed), name


def test_every_entry_declares_its_scope_explicitly() -> None:
    """`scope` has no default: each entry gives a pre-parse check or says
    None (parse every file) on purpose."""
    field = {f.name: f for f in dataclasses.fields(registry.RuleSpec)}["scope"]
    assert field.default is dataclasses.MISSING
    for init in sorted((PACKAGE / "rules").glob("*/__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "RuleSpec":
                keywords = {k.arg for k in node.keywords}
                assert "scope" in keywords or len(node.args) >= 3, ast.unparse(node)
    for spec in rule_specs():
        assert spec.scope is None or callable(spec.scope), spec.code


def test_codes_are_in_fix_order_and_each_declared_once() -> None:
    codes = [spec.code for spec in rule_specs()]
    assert codes == sorted(codes, key=lambda c: (len(c), c))
    assert len(set(codes)) == len(codes)
    assert rules.RULE_CODES == tuple(codes)
    assert {spec.family for spec in rule_specs()} == {
        p.parent.name for p in (PACKAGE / "rules").glob("*/__init__.py")
    }


def test_relevance_keeps_what_the_pruned_parse_kept_for_each_rule() -> None:
    """What each rule's entry says `check`'s pruned parse keeps for it is
    what `relevant_code` kept before the registry said it."""
    by_code = rules.specs_by_code()
    relevance = {code: spec.relevance for code, spec in by_code.items()}
    assert all(r is not None for r in relevance.values())
    callers_unread = {c for c, r in relevance.items() if r is not None and not r.reads_callers}
    assert callers_unread == {
        "TFR101", "TFR102", "TFR103", "TFR104", "TFR105", "TFR106", "TFR107", "TFR108", "TFR109",
        "TFR110",
        "TFR204",
        "TFR205", "TFR206", "TFR207", "TFR308",
    }  # fmt: skip
    by_name = {c for c, r in relevance.items() if r is not None and r.inputs_by_name}
    assert by_name == {"TFR302", "TFR303", "TFR304", "TFR305", "TFR306"}
    assert {c for c, r in relevance.items() if r is not None and r.state_writes} == {"TFR201"}
    assert {c for c, r in relevance.items() if r is not None and r.averages} == {"TFR306"}
    assert {c for c, r in relevance.items() if r is not None and r.keras_ops} == {"TFR101"}


def test_combined_relevance_of_no_rule_keeps_no_caller() -> None:
    none = registry.Relevance.combined([])
    assert not none.reads_callers
    both = registry.Relevance.combined([registry.TRACED_CODE_ONLY, registry.WITH_CALLERS])
    assert both.reads_callers


def test_can_fire_without_a_scope_or_an_entry_is_always_true() -> None:
    from tfrewrite.facts.index import build_index

    index = build_index("x = 1\n", "m.py", "m")
    assert registry.RuleSpec("TFR999", "toy", scope=None).can_fire(index, {})
    assert rules.can_fire("TFR999", index, {})
    assert not rules.can_fire("TFR101", index, {})
    assert rules.codes_that_can_fire(["TFR101", "TFR999"], index, {}) == ["TFR999"]


def test_the_registry_loads_no_libcst_no_rule_module_and_no_analysis() -> None:
    """Every run selects rules through the registry; a run answered from the
    cache never needs LibCST, a rule, or the pass-1 analysis (the pre-parse
    checks import the facts when they run)."""
    script = textwrap.dedent(
        """
        import sys
        from tfrewrite import rules
        rules.select_codes(["ALL"], [])
        modules = rules.RULE_MODULES
        print(
            sorted(
                m
                for m in sys.modules
                if m.startswith("libcst") or m in modules or m == "tfrewrite.facts.index"
            )
        )
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


# -- scripts/add_rule.py ------------------------------------------------------------------


def _copy_package(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    shutil.copytree(PACKAGE, root / "tfrewrite", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root)
    env.pop("PYTHONSAFEPATH", None)
    return env


def test_add_rule_scaffolds_a_rule_everything_picks_up(tmp_path: Path) -> None:
    root = _copy_package(tmp_path)
    package = root / "tfrewrite"
    before = {p.relative_to(package) for p in package.rglob("*.py")}
    added = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--family=python_state",
            "--code=TFR208",
            "--name=toy-hazard",
            "--module=toy_hazard",
            f"--root={package}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert added.returncode == 0, added.stderr
    after = {p.relative_to(package) for p in package.rglob("*.py")}
    assert after - before == {Path("rules/python_state/toy_hazard.py")}
    family = (package / "rules" / "python_state" / "__init__.py").read_text(encoding="utf-8")
    assert 'code="TFR208",\n        module="toy_hazard",' in family

    script = textwrap.dedent(
        """
        import tfrewrite
        from tfrewrite import rules
        from tfrewrite.facts.index import build_index
        from tfrewrite.pipeline.relevant_code import prune

        assert tfrewrite.__file__.startswith({root!r}), tfrewrite.__file__
        assert "TFR208" in rules.RULE_CODES
        assert rules.select_codes(["TFR2"], []) == [
            "TFR201", "TFR202", "TFR203", "TFR204", "TFR205", "TFR206", "TFR207",
            "TFR208",
        ]
        assert [r.code for r in rules.ALL_RULES] == list(rules.RULE_CODES)
        rule = rules.RULES_BY_CODE["TFR208"]
        assert type(rule).__name__ == "ToyHazard" and rule.name == "toy-hazard"
        doc = rule.render_doc()
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety"):
            assert heading in doc, heading
        # No scope and no relevance yet: it runs on every file, which check
        # then parses whole.
        source = "import tensorflow as tf\\n\\ndef f():\\n    return 1\\n"
        index = build_index(source, "m.py", "m")
        assert rules.can_fire("TFR208", index, {{}})
        assert prune(source, index, {{}}, ["TFR101"]) is not None
        assert prune(source, index, {{}}, ["TFR101", "TFR208"]) is None

        # tests/test_rule_examples.py runs the new rule's examples with no
        # edit: the Valid one passes; the Invalid one fails until `check`
        # reports it.
        import sys
        sys.path.insert(0, {tests!r})
        import test_rule_examples

        cases = [p.values for p in test_rule_examples.CASES if p.values[0].code == "TFR208"]
        assert len(cases) == 2, cases
        outcomes = []
        for case in cases:
            try:
                test_rule_examples.test_rule_example(*case)
                outcomes.append("passed")
            except AssertionError as error:
                outcomes.append(str(error).splitlines()[0])
        print(outcomes)
        """
    ).format(root=str(root), tests=str(REPO / "tests"))
    checked = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=_env(root),
    )
    assert checked.returncode == 0, checked.stderr
    # The Invalid example fails its count of findings (the messages found: none).
    assert checked.stdout.strip() == "['[]', 'passed']", checked.stdout


def test_add_rule_refuses_a_code_or_name_taken_and_an_unknown_family(tmp_path: Path) -> None:
    package = _copy_package(tmp_path) / "tfrewrite"
    add_rule = _script()
    for family, code, name, reason in (
        ("python_state", "TFR201", "fresh-name", "already declared"),
        ("python_state", "TFR299", "tensor-if", "already TFR101's"),
        ("no_such_family", "TFR299", "fresh-name", "no family"),
        ("python_state", "TFR2", "fresh-name", "not a rule code"),
    ):
        with pytest.raises(add_rule.ScaffoldError, match=reason):
            add_rule.scaffold(package, family, code, name, "fresh_module")
    assert not list(package.rglob("fresh_module.py"))


@pytest.mark.parametrize(
    "source",
    [
        '"""Doc."""\n\nfrom tfrewrite.rules.registry import RuleSpec\n\nRULES = ()\n',
        '"""Doc."""\n\nfrom tfrewrite.rules.registry import RuleSpec\n\n'
        'RULES = (RuleSpec("TFR901", "a", None),)\n',
        '"""Doc."""\n\nRULES = ()\n',
    ],
)
def test_add_spec_lays_out_any_rules_tuple(source: str) -> None:
    add_rule = _script()
    text = add_rule.add_spec(source, "TFR902", "toy")
    namespace: dict[str, object] = {}
    exec(compile(text, "family.py", "exec"), namespace)
    specs = namespace["RULES"]
    assert isinstance(specs, tuple)
    assert [s.code for s in specs][-1] == "TFR902"
    assert specs[-1].module == "toy" and specs[-1].scope is None and specs[-1].relevance is None
    assert text.startswith('"""Doc."""\n')
