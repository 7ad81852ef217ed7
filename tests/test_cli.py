"""The command line: exit codes, formats, --diff, writes, errors, config."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tfrewrite.cli import app
from tfrewrite.rules import ALL_RULES

EXAMPLES = Path(__file__).parent.parent / "examples"

PRINTING = textwrap.dedent(
    """\
    import tensorflow as tf


    @tf.function
    def loss(y_true, y_pred):
        print(y_pred)
        return tf.reduce_mean(y_true - y_pred)
    """
)
FLAG = textwrap.dedent(
    """\
    import tensorflow as tf

    flag = False


    @tf.function
    def pick(first, second):
        if flag:
            return first
        return second


    def enable():
        global flag
        flag = True
    """
)
CLEAN = "import tensorflow as tf\n\n\ndef f(x):\n    return tf.reduce_sum(x)\n"


def invoke(args: list[str], cwd: Path, stdin: str | None = None):
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(app, args, input=stdin, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "flag.py").write_text(FLAG)
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN)
    return tmp_path


def has_rule(code: str) -> bool:
    return any(r.code == code for r in ALL_RULES)


def test_check_exit_codes(project: Path) -> None:
    assert invoke(["check", "pkg/clean.py"], project).exit_code == 0
    result = invoke(["check", "pkg"], project)
    assert result.exit_code == 1
    assert "pkg/flag.py:8:8: TFR201" in result.output
    assert invoke(["check", "pkg", "--exit-zero"], project).exit_code == 0
    assert invoke(["check", "pkg", "--ignore", "TFR2"], project).exit_code == 0
    assert invoke(["check", "pkg", "--select", "TFR201"], project).exit_code == 1


def test_unknown_selector_and_missing_path_exit_2(project: Path) -> None:
    result = invoke(["check", "pkg", "--select", "XYZ9"], project)
    assert result.exit_code == 2
    assert "unknown rule selector" in result.output
    assert invoke(["check", "nope.py"], project).exit_code == 2


def test_syntax_error_is_reported_and_others_still_checked(project: Path) -> None:
    (project / "pkg" / "broken.py").write_text("import tensorflow as tf\ndef f(:\n")
    result = invoke(["check", "pkg"], project)
    assert result.exit_code == 2
    assert "broken.py:2" in result.output and "syntax error" in result.output
    assert "TFR201" in result.output  # the other file was still checked


def test_json_output_parses(project: Path) -> None:
    result = invoke(["check", "pkg", "--output-format", "json"], project)
    data = json.loads(result.output)
    assert data[0]["code"] == "TFR201"
    assert data[0]["location"] == {"row": 8, "column": 8}
    lines = invoke(["check", "pkg", "--output-format", "json-lines"], project).output.splitlines()
    assert [json.loads(line)["code"] for line in lines] == ["TFR201"]


def test_concise_and_statistics(project: Path) -> None:
    concise = invoke(["check", "pkg", "--output-format", "concise"], project).output
    assert concise.splitlines()[0].startswith("pkg/flag.py:8:8: TFR201")
    stats = invoke(["check", "pkg", "--statistics"], project).output
    assert "TFR201" in stats and stats.strip().startswith("1")


def test_noqa_and_file_exemption(project: Path) -> None:
    path = project / "pkg" / "flag.py"
    path.write_text(FLAG.replace("    if flag:", "    if flag:  # noqa: TFR201"))
    assert invoke(["check", "pkg"], project).exit_code == 0
    path.write_text(FLAG.replace("    if flag:", "    if flag:  # noqa"))
    assert invoke(["check", "pkg"], project).exit_code == 0
    path.write_text("# tfrewrite: noqa\n" + FLAG)
    assert invoke(["check", "pkg"], project).exit_code == 0


def test_config_select_ignore_and_errors(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.tfrewrite]\nignore = ["TFR201"]\n')
    assert invoke(["check", "pkg"], project).exit_code == 0
    (project / "pyproject.toml").write_text(
        '[tool.tfrewrite]\nper-file-ignores = {"pkg/flag.py" = ["TFR2"]}\n'
    )
    assert invoke(["check", "pkg"], project).exit_code == 0
    (project / "pyproject.toml").write_text('[tool.tfrewrite]\nexclude = ["pkg/flag.py"]\n')
    assert invoke(["check", "pkg"], project).exit_code == 0
    (project / "pyproject.toml").write_text('[tool.tfrewrite]\nselectt = ["TFR"]\n')
    result = invoke(["check", "pkg"], project)
    assert result.exit_code == 2
    assert "selectt" in result.output and "pyproject.toml" in result.output
    (project / "pyproject.toml").write_text('[tool.tfrewrite]\nunsafe-fixes = "yes"\n')
    assert invoke(["check", "pkg"], project).exit_code == 2


def test_gitignore_is_honoured(project: Path) -> None:
    (project / ".gitignore").write_text("pkg/flag.py\n")
    assert invoke(["check", "."], project).exit_code == 0


def test_stdin(project: Path) -> None:
    result = invoke(["check", "-", "--stdin-filename", "x.py"], project, stdin=FLAG)
    assert result.exit_code == 1
    assert "x.py:8:8: TFR201" in result.output


def test_rule_command() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["rule", "TFR201"])
    assert result.exit_code == 0
    assert "module-state-in-traced-code" in result.output
    listing = runner.invoke(app, ["rule", "--all"])
    assert all(r.code in listing.output for r in ALL_RULES)
    assert runner.invoke(app, ["rule", "TFR999"]).exit_code == 2


@pytest.mark.skipif(not has_rule("TFR103"), reason="needs a fixable rule")
def test_fix_diff_writes_nothing_and_applies_with_git(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    (tmp_path / "loss.py").write_text(PRINTING)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    result = invoke(["fix", "--diff", "."], tmp_path)
    assert result.exit_code == 1
    assert (tmp_path / "loss.py").read_text() == PRINTING
    diff = result.stdout
    assert diff.startswith("--- a/loss.py\n+++ b/loss.py\n")
    (tmp_path / "change.patch").write_text(diff)
    subprocess.run(["git", "apply", "--check", "change.patch"], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "change.patch"], cwd=tmp_path, check=True)
    applied = (tmp_path / "loss.py").read_text()
    (tmp_path / "change.patch").unlink()
    assert invoke(["fix", "."], tmp_path.parent / tmp_path.name).exit_code in (0, 1)
    assert (tmp_path / "loss.py").read_text() == applied


@pytest.mark.skipif(not has_rule("TFR103"), reason="needs a fixable rule")
def test_fix_writes_atomically_keeps_mode_newlines_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "loss.py"
    path.write_bytes(PRINTING.replace("\n", "\r\n").encode())
    path.chmod(0o751)
    result = invoke(["fix", "loss.py", "--show-fixes"], tmp_path)
    assert result.exit_code == 0, result.output
    assert "TFR103" in result.output
    data = path.read_bytes()
    assert b"tf.print" in data
    assert data.count(b"\r\n") == data.count(b"\n")
    assert (path.stat().st_mode & 0o777) == 0o751
    assert invoke(["fix", "loss.py"], tmp_path).exit_code == 0
    assert path.read_bytes() == data
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tfrewrite")]


@pytest.mark.skipif(not has_rule("TFR103"), reason="needs a fixable rule")
def test_fix_with_a_broken_file_fixes_the_others_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / "loss.py").write_text(PRINTING)
    (tmp_path / "broken.py").write_text("import tensorflow as tf\nx = (\n")
    result = invoke(["fix", "."], tmp_path)
    assert result.exit_code == 2
    assert "tf.print" in (tmp_path / "loss.py").read_text()
    assert (tmp_path / "broken.py").read_text() == "import tensorflow as tf\nx = (\n"


@pytest.mark.skipif(not has_rule("TFR103"), reason="needs a fixable rule")
def test_fix_stdin_prints_fixed_source(tmp_path: Path) -> None:
    result = invoke(["fix", "-", "--stdin-filename", "loss.py"], tmp_path, stdin=PRINTING)
    assert "tf.print(" in result.stdout


def test_fix_is_idempotent_over_examples(tmp_path: Path) -> None:
    target = tmp_path / "examples"
    shutil.copytree(EXAMPLES, target)
    invoke(["fix", "--unsafe-fixes", "."], target)
    once = {p: p.read_text() for p in sorted(target.rglob("*.py"))}
    invoke(["fix", "--unsafe-fixes", "."], target)
    twice = {p: p.read_text() for p in sorted(target.rglob("*.py"))}
    assert once == twice
    diff = invoke(["fix", "--diff", "--unsafe-fixes", "."], target)
    assert diff.stdout == ""


@pytest.mark.skipif(not has_rule("TFR103"), reason="needs TFR103")
def test_print_output_stream_setting(tmp_path: Path) -> None:
    (tmp_path / "loss.py").write_text(PRINTING)
    (tmp_path / "pyproject.toml").write_text('[tool.tfrewrite]\nprint-output-stream = "stderr"\n')
    invoke(["fix", "loss.py"], tmp_path)
    assert "output_stream=sys.stderr" in (tmp_path / "loss.py").read_text()
    (tmp_path / "pyproject.toml").write_text('[tool.tfrewrite]\nprint-output-stream = "stdrr"\n')
    assert invoke(["check", "loss.py"], tmp_path).exit_code == 2


def test_an_unsafe_fix_says_unsafe_once(tmp_path: Path) -> None:
    """A fix message that already explains why it is unsafe is not followed
    by a second "(unsafe)"; one that does not is marked."""
    (tmp_path / "loss.py").write_text(
        textwrap.dedent(
            """\
            import numpy as np
            import tensorflow as tf


            @tf.function
            def f(x):
                return np.power(x, 2)
            """
        )
    )
    result = CliRunner().invoke(app, ["check", "--no-cache", str(tmp_path / "loss.py")])
    [help_line] = [line for line in result.output.splitlines() if "= help:" in line]
    assert help_line.count("unsafe") == 1 and "(unsafe: it assumes `x`" in help_line


def test_fix_accepts_no_cache(tmp_path: Path) -> None:
    """`fix` never reads the cache; `--no-cache` is accepted as Ruff's
    `check --fix --no-cache` is, so scripts can pass it to both commands."""
    (tmp_path / "ok.py").write_text("import tensorflow as tf\n")
    result = CliRunner().invoke(app, ["fix", "--no-cache", str(tmp_path)])
    assert result.exit_code == 0, result.output


ADVERSARIAL = Path(__file__).parent / "data" / "adversarial"


def _count(pattern: str, text: str) -> int:
    """The number before `pattern` in the summary line (0 when absent)."""
    import re

    summary = text.strip().splitlines()[-1] if text.strip() else ""
    match = re.search(r"(\d+) " + pattern, summary)
    return int(match.group(1)) if match else 0


FIXABLE = "fixable with"
MORE = "more with `--unsafe-fixes`"


def _fixed(text: str) -> int:
    import re

    summary = text.strip().splitlines()[-1] if text.strip() else ""
    match = re.match(r"Fixed (\d+) finding", summary)
    return int(match.group(1)) if match else 0


@pytest.mark.parametrize("source", [EXAMPLES, ADVERSARIAL], ids=["examples", "adversarial"])
def test_every_count_is_what_the_next_command_does(tmp_path: Path, source: Path) -> None:
    """ "N fixable" is the "Fixed N" of `fix`; "M more with `--unsafe-fixes`"
    (after `fix`, and after the `check` that follows) is the "Fixed M" of
    `fix --unsafe-fixes`; `check --unsafe-fixes`'s "T fixable" is the
    "Fixed T" of `fix --unsafe-fixes` on the same files."""
    safe_first = tmp_path / "safe"
    shutil.copytree(source, safe_first)
    checked = invoke(["check", "--no-cache", "."], safe_first).stdout
    fixed = invoke(["fix", "."], safe_first).stdout
    assert _fixed(fixed) == _count(FIXABLE, checked) > 0, (checked, fixed)
    after_check = invoke(["check", "--no-cache", "."], safe_first).stdout
    unsafe = invoke(["fix", "--unsafe-fixes", "."], safe_first).stdout
    assert _count(MORE, fixed) == _count(MORE, after_check) == _fixed(unsafe) > 0, (
        fixed,
        after_check,
        unsafe,
    )

    all_at_once = tmp_path / "unsafe"
    shutil.copytree(source, all_at_once)
    checked = invoke(["check", "--no-cache", "--unsafe-fixes", "."], all_at_once).stdout
    # The summary names the command that fixes that many.
    assert "fixable with `tfrewrite fix --unsafe-fixes`" in checked, checked
    applied = invoke(["fix", "--unsafe-fixes", "."], all_at_once).stdout
    assert _fixed(applied) == _count(FIXABLE, checked) > 0, (checked, applied)


# A script that only ever sees NumPy arrays, and a module of the same name in
# a sub-folder whose function of the same name is mapped over a dataset.
EAGER_SCRIPT = """\
import numpy as np


def preprocess(a):
    return (a - np.min(a)) / (np.max(a) - np.min(a))


print(preprocess(np.arange(4.0)))
"""
MAPPED_MODULE = """\
import tensorflow as tf


def preprocess(x):
    return tf.cast(x, tf.float32) / 255.0


ds = tf.data.Dataset.range(4).map(preprocess)
"""


def test_a_project_checked_from_another_folder_is_rooted_where_it_is(tmp_path: Path) -> None:
    """Module names come from the checked project's own folder: run from a
    sibling folder, `proj/test.py` and `proj/sub/test.py` are two modules, and
    the eager script is not taken for the traced `map` function."""
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / "test.py").write_text(EAGER_SCRIPT)
    (project / "sub" / "test.py").write_text(MAPPED_MODULE)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    from_outside = invoke(["check", "--no-cache", "../proj"], elsewhere)
    from_inside = invoke(["check", "--no-cache", "."], project)
    assert from_outside.exit_code == from_inside.exit_code == 0, from_outside.stdout
    assert "TFR104" not in from_outside.stdout
