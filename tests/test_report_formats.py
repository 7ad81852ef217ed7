"""The CI formats: github, sarif, rdjsonl, rdjson, junit.

Golden outputs come from the command line run on fixtures in `tests/data/ci/`
whose findings sit after non-ASCII text on their lines, so every column unit
(code points, UTF-16 code units, UTF-8 bytes) differs from the others. Set
`TFREWRITE_UPDATE_GOLDEN=1` to rewrite the golden files after a deliberate
change (a rule's message, a new rule), and review the diff.

While TFR102 (NumPy random) and TFR103 (print) are not registered, small
stand-in rules defined here produce the same kind of findings and fixes; a
third stand-in makes a fix that edits two places (an added import and the
call that needs it).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import ClassVar

import jsonschema
import libcst as cst
import pytest
import yaml
from typer.testing import CliRunner

import tfrewrite.rules as registry
from tfrewrite import __version__
from tfrewrite.cli import app
from tfrewrite.facts.import_requests import ImportRequest
from tfrewrite.facts.walk import calls
from tfrewrite.findings import Applicability, FileError, Finding, FixInfo, Position, TextEdit
from tfrewrite.report import FORMATS, FORMATS_WITH_EDITS, ReportContext
from tfrewrite.report.columns import SourceLines
from tfrewrite.report.github import escape_data, escape_property
from tfrewrite.report.rdjson import plan_suggestions
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rules.base import Rule

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
CI = DATA / "ci"
CI_FORMATS = ("github", "sarif", "rdjsonl", "rdjson", "junit")
GOLDEN_SUFFIX = {
    "github": "github.txt",
    "sarif": "sarif.json",
    "rdjsonl": "rdjsonl",
    "rdjson": "rdjson.json",
    "junit": "junit.xml",
}


# -- stand-in rules ---------------------------------------------------------------------


class PrintStandIn(Rule):
    code = "TFR993"
    name = "print-stand-in"
    summary = "Test stand-in for TFR103: `print` in traced code."
    explanation = "`print` runs once, while tracing; `tf.print` runs on every call."
    fix_applicability = Applicability.SAFE

    def check(self, ctx):  # type: ignore[no-untyped-def]
        alias, imports = ctx.tensorflow()
        for function in ctx.traced_functions():
            for call in calls(function.node):
                if isinstance(call.func, cst.Name) and call.func.value == "print":
                    fixed = call.with_changes(func=cst.parse_expression(f"{alias}.print"))
                    yield Violation(
                        call,
                        "`print` runs once, while tracing: use `tf.print`",
                        CstFix("Replace with `tf.print`", (NodeEdit(call, fixed),), imports),
                    )


class NumpyRandomStandIn(Rule):
    code = "TFR992"
    name = "numpy-random-stand-in"
    summary = "Test stand-in for TFR102: `np.random.normal` in traced code."
    explanation = "NumPy samples once, while tracing; `tf.random.normal` samples on every call."
    fix_applicability = Applicability.SAFE
    # Write `tf` and import it, whatever the file calls TensorFlow: a fix in two places.
    force_tf_import: ClassVar[bool] = False

    def check(self, ctx):  # type: ignore[no-untyped-def]
        alias, imports = ctx.tensorflow()
        if self.force_tf_import:
            alias, imports = "tf", (ImportRequest("tensorflow", None, "tf"),)
        for function in ctx.traced_functions():
            for call in calls(function.node):
                if ctx.names.qualified_name(call.func) != "numpy.random.normal":
                    continue
                loc, scale = (ctx.code(arg.value) for arg in call.args[:2])
                size = next(
                    ctx.code(a.value) for a in call.args if a.keyword and a.keyword.value == "size"
                )
                fixed = cst.parse_expression(
                    f"{alias}.random.normal({size}, mean={loc}, stddev={scale})"
                )
                yield Violation(
                    call,
                    "`np.random.normal` samples once, while tracing: the noise is a constant",
                    CstFix("Use `tf.random.normal`", (NodeEdit(call, fixed),), imports),
                )


class ImportingStandIn(NumpyRandomStandIn):
    code = "TFR999"
    name = "importing-stand-in"
    summary = "Test rule whose fix adds an import and rewrites a call."
    force_tf_import = True


@pytest.fixture
def rules():  # type: ignore[no-untyped-def]
    """Register extra rules for one test; yields a function taking rule instances.
    The registry's list and dictionary are changed in place (other modules hold
    them) and restored afterwards."""
    all_rules, by_code = registry.ALL_RULES, registry.RULES_BY_CODE
    added: list[Rule] = []

    def install(*extra: Rule) -> None:
        for rule in extra:
            assert rule.code not in by_code
            all_rules.append(rule)
            by_code[rule.code] = rule
            added.append(rule)

    yield install
    for rule in added:
        all_rules.remove(rule)
        del by_code[rule.code]


def hazard_codes(install) -> list[str]:  # type: ignore[no-untyped-def]
    """TFR102 and TFR103 when registered, their stand-ins otherwise."""
    codes = []
    for real, stand_in in (("TFR102", NumpyRandomStandIn()), ("TFR103", PrintStandIn())):
        if real in registry.RULES_BY_CODE:
            codes.append(real)
        else:
            install(stand_in)
            codes.append(stand_in.code)
    return codes


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the fixtures, as the current folder (paths in reports are relative)."""
    for name in ("hazards.py", "multi_edit.py"):
        shutil.copyfile(CI / name, tmp_path / name)
    crlf = (CI / "hazards.py").read_bytes().replace(b"\n", b"\r\n")
    (tmp_path / "hazards_crlf.py").write_bytes(crlf)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


def check_golden(name: str, text: str) -> None:
    path = CI / name
    text = text.replace(f'"{__version__}"', '"<version>"')
    if os.environ.get("TFREWRITE_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"{path.name} missing: run with TFREWRITE_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, (
        f"{path.name} differs (TFREWRITE_UPDATE_GOLDEN=1 rewrites it; review the diff)"
    )


# -- golden outputs ---------------------------------------------------------------------


def test_ci_formats_are_registered():
    assert set(CI_FORMATS) <= set(FORMATS)
    assert {"sarif", "rdjsonl", "rdjson"} <= FORMATS_WITH_EDITS


def without_rule_docs(sarif: str) -> str:
    """SARIF output with each rule's long documentation replaced by a marker:
    the docs change with every rule edit, and
    `test_sarif_rule_help_is_the_rule_documentation` checks them exactly."""
    log = json.loads(sarif)
    for descriptor in log["runs"][0]["tool"]["driver"]["rules"]:
        for key in ("fullDescription", "help"):
            if key in descriptor:
                descriptor[key] = {k: f"<{key} of {descriptor['id']}>" for k in descriptor[key]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("fmt", CI_FORMATS)
def test_golden_hazards(fmt, rules, workdir):
    codes = hazard_codes(rules)
    code, out = cli("check", "hazards.py", "--select", ",".join(codes), "--output-format", fmt)
    assert code == 1
    check_golden(f"hazards.{GOLDEN_SUFFIX[fmt]}", without_rule_docs(out) if fmt == "sarif" else out)


@pytest.mark.parametrize("fmt", ["sarif", "rdjsonl"])
def test_golden_multi_edit_fix(fmt, rules, workdir):
    rules(ImportingStandIn())
    code, out = cli("check", "multi_edit.py", "--select", "TFR999", "--output-format", fmt)
    assert code == 1
    check_golden(
        f"multi_edit.{GOLDEN_SUFFIX[fmt]}", without_rule_docs(out) if fmt == "sarif" else out
    )


@pytest.mark.parametrize("fmt", CI_FORMATS)
def test_fix_diff_accepts_every_ci_format(fmt, rules, workdir):
    codes = hazard_codes(rules)
    before = (workdir / "hazards.py").read_text(encoding="utf-8")
    code, out = cli(
        "fix", "--diff", "hazards.py", "--select", ",".join(codes), "--output-format", fmt
    )
    assert code == 1 and out
    assert (workdir / "hazards.py").read_text(encoding="utf-8") == before


@pytest.mark.parametrize("fmt", CI_FORMATS)
def test_clean_file_output(fmt, rules, workdir):
    rules(PrintStandIn())
    (workdir / "clean.py").write_text(
        "import tensorflow as tf\n\n\n@tf.function\ndef f(x):\n    return x\n"
    )
    code, out = cli("check", "clean.py", "--select", "TFR993", "--output-format", fmt)
    assert code == 0
    if fmt == "sarif":
        assert json.loads(out)["runs"][0]["results"] == []
    elif fmt == "rdjson":
        assert json.loads(out)["diagnostics"] == []
    elif fmt == "junit":
        root = ET.fromstring(out)
        assert root.get("failures") == "0" and len(root.findall(".//testcase")) == 1
    else:
        assert out.strip() == ""


# -- positions: each format's column unit ------------------------------------------------


def test_source_lines_units():
    lines = SourceLines("x = 1\ns = 'a😀b'; é = 2\n")
    b = Position(2, 8)  # code points: s, space, =, space, ', a, 😀, b
    assert lines.utf16_column(b) == 9  # 😀 is two UTF-16 code units
    assert lines.utf8_column(b) == 11  # and four UTF-8 bytes
    e = Position(2, 12)  # `é` after "'; "
    assert lines.utf8_column(Position(2, 13)) == lines.utf8_column(e) + 2
    assert lines.utf16_column(Position(2, 13)) == lines.utf16_column(e) + 1
    assert SourceLines(None).utf8_column(b) == 8  # no source: code points are all there is
    assert lines.utf8_column(Position(3, 1)) == 1  # the position after the last newline


def _column_of(source: str, line: int, needle: str) -> int:
    return source.split("\n")[line - 1].index(needle) + 1


def test_columns_after_non_ascii_text(rules, workdir):
    codes = hazard_codes(rules)
    source = (workdir / "hazards.py").read_text(encoding="utf-8")
    line_no = next(i for i, text in enumerate(source.split("\n"), 1) if "np.random.normal" in text)
    text = source.split("\n")[line_no - 1]
    prefix = text[: text.index("np.random.normal")]
    assert any(ord(ch) > 0xFFFF for ch in prefix), (
        "the fixture must hold astral characters before the finding"
    )

    _, sarif = cli("check", "hazards.py", "--select", ",".join(codes), "--output-format", "sarif")
    _, rdjsonl = cli(
        "check", "hazards.py", "--select", ",".join(codes), "--output-format", "rdjsonl"
    )
    _, github = cli("check", "hazards.py", "--select", ",".join(codes), "--output-format", "github")

    region = next(
        r["locations"][0]["physicalLocation"]["region"]
        for r in json.loads(sarif)["runs"][0]["results"]
        if r["locations"][0]["physicalLocation"]["region"]["startLine"] == line_no
    )
    assert region["startColumn"] == len(prefix.encode("utf-16-le")) // 2 + 1
    start = next(
        d["location"]["range"]["start"]
        for d in map(json.loads, rdjsonl.splitlines())
        if d["location"]["range"]["start"]["line"] == line_no
    )
    assert start["column"] == len(prefix.encode("utf-8")) + 1
    annotation = next(a for a in github.splitlines() if f",line={line_no}," in a)
    assert f",col={len(prefix) + 1}," in annotation  # GitHub: characters
    # The three units really differ on this line.
    assert len({len(prefix) + 1, region["startColumn"], start["column"]}) == 3


# -- fixes and suggestions ----------------------------------------------------------------


def _byte_offset(data: bytes, line: int, column: int) -> int:
    """Offset of a 1-based (line, UTF-8 byte column) position in `data`."""
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    if line > len(starts):
        return len(data)
    return starts[line - 1] + column - 1


def _utf16_offset(text: str, line: int, column: int) -> int:
    """Code-point offset of a 1-based (line, UTF-16 column) position in `text`."""
    lines = text.split("\n")
    if line > len(lines):
        return len(text)
    before = sum(len(t) + 1 for t in lines[: line - 1])
    units = lines[line - 1].encode("utf-16-le")[: (column - 1) * 2].decode("utf-16-le")
    return before + len(units)


def _apply_rdjson(data: bytes, suggestions: list[dict]) -> bytes:
    ordered = sorted(
        suggestions,
        key=lambda s: (s["range"]["start"]["line"], s["range"]["start"]["column"]),
        reverse=True,
    )
    for s in ordered:
        begin = _byte_offset(data, **s["range"]["start"])
        end = _byte_offset(data, **s["range"]["end"])
        data = data[:begin] + s["text"].encode("utf-8") + data[end:]
    return data


def _apply_sarif(text: str, replacements: list[dict]) -> str:
    """Apply SARIF replacements; identical ones (the same import added by two
    fixes) apply once, as a consumer applying several fixes would."""
    spans = set()
    for r in replacements:
        region = r["deletedRegion"]
        begin = _utf16_offset(text, region["startLine"], region["startColumn"])
        end = _utf16_offset(text, region["endLine"], region["endColumn"])
        spans.add((begin, end, r["insertedContent"]["text"]))
    for begin, end, content in sorted(spans, reverse=True):
        text = text[:begin] + content + text[end:]
    return text


def _no_overlap(spans: list[tuple[int, int]]) -> bool:
    spans = sorted(spans)
    return all(a_end <= b_begin for (_, a_end), (b_begin, _) in zip(spans, spans[1:], strict=False))


@pytest.mark.parametrize(
    ("fixture", "extra"),
    [("hazards.py", None), ("hazards_crlf.py", None), ("multi_edit.py", "TFR999")],
)
def test_applying_every_suggestion_gives_what_fix_writes(fixture, extra, rules, workdir):
    codes = hazard_codes(rules)
    if extra:
        rules(ImportingStandIn())
        codes = [extra]
    select = ",".join(codes)
    original = (workdir / fixture).read_bytes()
    _, out = cli(
        "check", fixture, "--select", select, "--output-format", "rdjsonl", "--unsafe-fixes"
    )
    diagnostics = [json.loads(line) for line in out.splitlines()]
    suggestions = [s for d in diagnostics for s in d.get("suggestions", [])]
    assert suggestions, "the fixture must have fixable findings"
    spans = [
        (_byte_offset(original, **s["range"]["start"]), _byte_offset(original, **s["range"]["end"]))
        for s in suggestions
    ]
    assert _no_overlap(spans)
    suggested = _apply_rdjson(original, suggestions)

    _, sarif = cli(
        "check", fixture, "--select", select, "--output-format", "sarif", "--unsafe-fixes"
    )
    replacements = [
        r
        for result in json.loads(sarif)["runs"][0]["results"]
        for fix in result.get("fixes", [])
        for change in fix["artifactChanges"]
        for r in change["replacements"]
    ]
    from_sarif = _apply_sarif(original.decode("utf-8"), replacements)

    cli("fix", fixture, "--select", select, "--unsafe-fixes")
    fixed = (workdir / fixture).read_bytes()
    assert fixed != original
    assert _without_imports_fix_removed(suggested, fixed) == fixed
    assert _without_imports_fix_removed(from_sarif.encode("utf-8"), fixed) == fixed


def _without_imports_fix_removed(suggested: bytes, fixed: bytes) -> bytes:
    """Each suggestion stands alone, so an import that only the fixes together
    leave unused stays in the accepted suggestions; `fix` removes it. Drop the
    top-level import lines `fix` removed (and the blank line they leave)."""
    kept = set(fixed.splitlines(keepends=True))
    lines = suggested.splitlines(keepends=True)
    out: list[bytes] = []
    for line in lines:
        if line.startswith((b"import ", b"from ")) and line not in kept:
            continue
        out.append(line)
    text = b"".join(out)
    return text if text == fixed else text.replace(b"\n\n\n\n", b"\n\n\n", 1)


@pytest.mark.parametrize(("fixture", "extra"), [("hazards.py", None), ("multi_edit.py", "TFR999")])
def test_each_suggestion_alone_leaves_valid_python(fixture, extra, rules, workdir):
    codes = hazard_codes(rules)
    if extra:
        rules(ImportingStandIn())
        codes = [extra]
    original = (workdir / fixture).read_bytes()
    _, out = cli(
        "check",
        fixture,
        "--select",
        ",".join(codes),
        "--output-format",
        "rdjsonl",
        "--unsafe-fixes",
    )
    for diagnostic in map(json.loads, out.splitlines()):
        for suggestion in diagnostic.get("suggestions", []):
            ast.parse(_apply_rdjson(original, [suggestion]).decode("utf-8"))
    _, sarif = cli(
        "check", fixture, "--select", ",".join(codes), "--output-format", "sarif", "--unsafe-fixes"
    )
    for result in json.loads(sarif)["runs"][0]["results"]:
        for fix in result.get("fixes", []):
            (change,) = fix["artifactChanges"]
            ast.parse(_apply_sarif(original.decode("utf-8"), change["replacements"]))


def test_multi_edit_fixes_sharing_an_import(rules, workdir):
    """Two findings whose fixes both add `import tensorflow as tf`: SARIF keeps
    one fix per finding with both of its replacements; rdjson offers one
    suggestion (carried by the first finding) so the import is added once."""
    rules(ImportingStandIn())
    _, sarif = cli("check", "multi_edit.py", "--select", "TFR999", "--output-format", "sarif")
    results = json.loads(sarif)["runs"][0]["results"]
    assert len(results) == 2
    for result in results:
        (fix,) = result["fixes"]
        (change,) = fix["artifactChanges"]
        assert change["artifactLocation"]["uri"] == "multi_edit.py"
        texts = [r["insertedContent"]["text"] for r in change["replacements"]]
        assert (
            len(texts) == 2
            and "import tensorflow as tf" in texts[0]
            and "tf.random.normal" in texts[1]
        )
    _, rdjsonl = cli("check", "multi_edit.py", "--select", "TFR999", "--output-format", "rdjsonl")
    first, second = map(json.loads, rdjsonl.splitlines())
    (suggestion,) = first["suggestions"]
    assert suggestion["text"].count("import tensorflow as tf") == 1
    assert suggestion["text"].count("tf.random.normal") == 2
    assert "makes 3 edits together" in first["message"]
    assert (
        f"also fixes the finding on line {second['location']['range']['start']['line']}"
        in first["message"]
    )
    assert "suggestions" not in second
    carrier_line = results[0]["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert (
        f"fixed by the suggested change on the finding at line {carrier_line}" in second["message"]
    )


def _finding(fix: FixInfo | None, message: str = "m", path: str = "a.py") -> Finding:
    return Finding(
        "TFR999", "importing-stand-in", message, path, Position(1, 1), Position(1, 2), fix
    )


def test_unsafe_fix_is_suggested_only_with_unsafe_fixes():
    edit = TextEdit(Position(1, 1), Position(1, 2), "y")
    finding = _finding(FixInfo(Applicability.UNSAFE, "change it", (edit,)))
    render = FORMATS["rdjsonl"]
    safe_only = json.loads(render([finding], [], ReportContext(sources={"a.py": "x\n"})))
    assert "suggestions" not in safe_only and "--unsafe-fixes" in safe_only["message"]
    with_unsafe = json.loads(
        render([finding], [], ReportContext(sources={"a.py": "x\n"}, unsafe_fixes=True))
    )
    assert with_unsafe["suggestions"] == [
        {"range": {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 2}}, "text": "y"}
    ]
    # SARIF records every fix, with its applicability.
    log = json.loads(FORMATS["sarif"]([finding], [], ReportContext(sources={"a.py": "x\n"})))
    (fix,) = log["runs"][0]["results"][0]["fixes"]
    assert fix["properties"]["applicability"] == "unsafe" and "unsafe" in fix["description"]["text"]


def test_joint_suggestion_needs_the_source():
    edits = (
        TextEdit(Position(1, 1), Position(1, 1), "a"),
        TextEdit(Position(3, 1), Position(3, 2), "b"),
    )
    finding = _finding(FixInfo(Applicability.SAFE, "m", edits))
    (plan,) = plan_suggestions([finding], SourceLines(None), False)
    assert plan.suggestion is None and "source is unknown" in plan.note
    (plan,) = plan_suggestions([finding], SourceLines("x\ny\nz\n"), False)
    joint = plan.suggestion
    assert joint is not None and joint.edits == 2
    assert (joint.start, joint.end, joint.text) == (Position(1, 1), Position(3, 2), "ax\ny\nb")


def test_overlapping_fixes_get_one_suggestion():
    """A fix whose edit overlaps a different edit of an earlier fix gets no
    suggestion (`tfrewrite fix` would apply it in a later round)."""
    outer = _finding(
        FixInfo(Applicability.SAFE, "m", (TextEdit(Position(1, 1), Position(1, 6), "f(a+b)"),))
    )
    inner = _finding(
        FixInfo(Applicability.SAFE, "m", (TextEdit(Position(1, 3), Position(1, 4), "A"),))
    )
    plans = plan_suggestions([outer, inner], SourceLines("g(a)+b\n"), False)
    assert plans[0].suggestion is not None and plans[0].suggestion.text == "f(a+b)"
    assert plans[1].suggestion is None and "overlaps the fix on line 1" in plans[1].note


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_suggestions_on_examples(example, tmp_path, monkeypatch, sarif_validator):
    """On every example, with the rules as registered: the SARIF validates,
    each suggestion alone leaves valid Python, and accepting every suggestion
    gives what `tfrewrite fix` writes. When `fix` needed a second round
    (a fix that only applies once another one did), `fix` run on the accepted
    suggestions must reach the same file."""
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(example, tmp_path / example.name)
    original = example.read_bytes()
    _, sarif = cli("check", example.name, "--output-format", "sarif", "--unsafe-fixes")
    assert sarif_validator.is_valid(json.loads(sarif))
    _, out = cli("check", example.name, "--output-format", "rdjsonl", "--unsafe-fixes")
    suggestions = [s for line in out.splitlines() for s in json.loads(line).get("suggestions", [])]
    for suggestion in suggestions:
        ast.parse(_apply_rdjson(original, [suggestion]).decode("utf-8"))
    suggested = _apply_rdjson(original, suggestions)
    cli("fix", example.name, "--unsafe-fixes")
    fixed = (tmp_path / example.name).read_bytes()
    suggested = _without_imports_fix_removed(suggested, fixed)
    if suggested != fixed:
        again = tmp_path / "again"
        again.mkdir()
        (again / example.name).write_bytes(suggested)
        cli("fix", str(again / example.name), "--unsafe-fixes")
        assert (again / example.name).read_bytes() == fixed


# Fields of reviewdog's `Diagnostic` protocol messages (proto/rdf/reviewdog.proto);
# reviewdog decodes rdjson with protojson, which rejects unknown fields.
RDF_FIELDS = {
    "DiagnosticResult": {"diagnostics": "Diagnostic*", "source": "Source", "severity": None},
    "Diagnostic": {
        "message": None,
        "location": "Location",
        "severity": None,
        "source": "Source",
        "code": "Code",
        "suggestions": "Suggestion*",
        "original_output": None,
        "images": None,
    },
    "Location": {"path": None, "range": "Range"},
    "Range": {"start": "Position", "end": "Position"},
    "Position": {"line": None, "column": None},
    "Suggestion": {"range": "Range", "text": None},
    "Source": {"name": None, "url": None},
    "Code": {"value": None, "url": None},
}


def _check_rdf(value: dict, message: str) -> None:
    fields = RDF_FIELDS[message]
    assert set(value) <= set(fields), (message, set(value) - set(fields))
    for key, item in value.items():
        kind = fields[key]
        if kind is None:
            continue
        for element in item if kind.endswith("*") else [item]:
            _check_rdf(element, kind.rstrip("*"))
    if message == "Position":
        assert value["line"] >= 1 and value.get("column", 1) >= 1
    if message == "Diagnostic":
        assert value["severity"] in ("ERROR", "WARNING", "INFO")


def test_rdjson_uses_only_reviewdog_fields(rules, workdir):
    codes = hazard_codes(rules)
    (workdir / "broken.py").write_text("import tensorflow as tf\ndef f(:\n", encoding="utf-8")
    args = ("check", "hazards.py", "broken.py", "--select", ",".join(codes), "--output-format")
    _, rdjson = cli(*args, "rdjson")
    _check_rdf(json.loads(rdjson), "DiagnosticResult")
    _, rdjsonl = cli(*args, "rdjsonl")
    lines = rdjsonl.splitlines()
    assert len(lines) == 3
    for line in lines:
        _check_rdf(json.loads(line), "Diagnostic")
    assert json.loads(lines[0])["severity"] == "ERROR"  # the file that does not parse


# -- SARIF ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def test_sarif_validates_against_the_schema(sarif_validator, rules, workdir):
    rules(ImportingStandIn())
    codes = hazard_codes(rules)
    (workdir / "broken.py").write_text("import tensorflow as tf\ndef f(:\n", encoding="utf-8")
    code, out = cli(
        "check",
        "hazards.py",
        "multi_edit.py",
        "broken.py",
        "--select",
        ",".join([*codes, "TFR999"]),
        "--output-format",
        "sarif",
    )
    assert code == 2  # broken.py does not parse
    log = json.loads(out)
    errors = sorted(sarif_validator.iter_errors(log), key=str)
    assert not errors, [e.message for e in errors]
    run = log["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert (
        notification["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.py"
    )
    assert any("fixes" in r for r in run["results"])


def test_sarif_schema_rejects_a_broken_log(sarif_validator):
    """The validation test can fail: a result without its message is invalid."""
    log = json.loads(FORMATS["sarif"]([_finding(None)], [], ReportContext()))
    assert sarif_validator.is_valid(log)
    del log["runs"][0]["results"][0]["message"]
    assert not sarif_validator.is_valid(log)


def test_sarif_rule_help_is_the_rule_documentation(rules, workdir):
    codes = hazard_codes(rules)
    _, out = cli("check", "hazards.py", "--select", ",".join(codes), "--output-format", "sarif")
    run = json.loads(out)["runs"][0]
    descriptors = run["tool"]["driver"]["rules"]
    assert sorted(d["id"] for d in descriptors) == sorted(codes)
    for descriptor in descriptors:
        rule = registry.RULES_BY_CODE[descriptor["id"]]
        _, doc = cli("rule", rule.code)
        assert (
            descriptor["help"]["markdown"] == descriptor["help"]["text"] == doc.removesuffix("\n")
        )
        assert descriptor["shortDescription"]["text"] == rule.summary
        full = descriptor["fullDescription"]["text"]
        assert full and full in textwrap.dedent(rule.explanation) and not full.startswith("#")
    for result in run["results"]:
        assert descriptors[result["ruleIndex"]]["id"] == result["ruleId"]
    assert run["columnKind"] == "utf16CodeUnits"


# -- GitHub ----------------------------------------------------------------------------------


def test_github_escaping():
    assert escape_data("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext: a, b"
    assert escape_property("dir,a/b:c%d\n") == "dir%2Ca/b%3Ac%25d%0A"
    finding = Finding(
        "TFR103", "print", "50% of\nlines: a, b", "we,ird:name.py", Position(3, 5), Position(3, 9)
    )
    (line,) = FORMATS["github"]([finding], [], ReportContext()).splitlines()
    assert line == (
        "::warning file=we%2Cird%3Aname.py,line=3,col=5,endLine=3,endColumn=9,"
        "title=tfrewrite (TFR103)::TFR103 50%25 of%0Alines: a, b"
    )


def test_github_multiline_finding_has_no_columns():
    finding = Finding("TFR101", "tensor-if", "m", "a.py", Position(3, 5), Position(6, 9))
    (line,) = FORMATS["github"]([finding], [], ReportContext()).splitlines()
    assert line == "::warning file=a.py,line=3,endLine=6,title=tfrewrite (TFR101)::TFR101 m"


def test_github_error_annotation():
    error = FileError("a.py", "syntax error: bad, input", 2, 7)
    (line,) = FORMATS["github"]([], [error], ReportContext()).splitlines()
    assert (
        line == "::error file=a.py,line=2,col=7,title=tfrewrite (error)::syntax error: bad, input"
    )


# -- JUnit ------------------------------------------------------------------------------------


def test_junit_structure(rules, workdir):
    codes = hazard_codes(rules)
    (workdir / "broken.py").write_text("import tensorflow as tf\ndef f(:\n", encoding="utf-8")
    _, out = cli(
        "check", "hazards.py", "broken.py", "--select", ",".join(codes), "--output-format", "junit"
    )
    root = ET.fromstring(out)
    failures = root.findall(".//testcase/failure")
    errors = root.findall(".//testcase/error")
    assert len(failures) == int(root.get("failures")) == 2
    assert len(errors) == int(root.get("errors")) == 1
    cases = [c for c in root.findall(".//testcase") if c.find("failure") is not None]
    assert all(c.get("file") == "hazards.py" and int(c.get("line")) > 0 for c in cases)
    assert {f.get("type") for f in failures} == set(codes)


# -- integration files -------------------------------------------------------------------------


def test_pre_commit_hooks():
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"tfrewrite-check", "tfrewrite-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["types"] == ["python"]
        assert hook["entry"].split()[0] == "tfrewrite"
    assert hooks["tfrewrite-check"]["entry"].split()[1] == "check"
    assert hooks["tfrewrite-fix"]["entry"].split()[1] == "fix"


def test_github_workflow_example():
    workflow = yaml.safe_load((ROOT / "examples" / "ci" / "github-workflow.yml").read_text())
    steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "--output-format github" in runs
    assert "--output-format sarif" in runs
    reviewdog = next(line for line in runs.splitlines() if "| reviewdog" in line)
    assert "tfrewrite check --output-format rdjsonl" in reviewdog
    assert "-f=rdjsonl" in reviewdog and "-reporter=github-pr-review" in reviewdog
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif") for s in steps)
    for fmt in ("github", "sarif", "rdjsonl"):
        assert fmt in FORMATS
