"""Lines named in messages: plain in a Python file, in their cell in a notebook."""

from __future__ import annotations

from tfrewrite.workspace.line_names import (
    cell_position,
    line_name,
    line_names,
    named_line,
    path_line,
    place_lines,
)

# Cell 2 starts at line 1 of the view, cell 4 at line 6 (cell 3 is markdown).
STARTS = ((2, 0), (4, 5))


def test_a_python_file_keeps_plain_line_numbers() -> None:
    message = f"{line_name(9)} calls `float()` ({line_names([3, 4, 5, 12])})"
    assert place_lines(message) == "line 9 calls `float()` (lines 3-5, 12)"


def test_a_notebook_names_the_cell_and_the_line_in_it() -> None:
    assert place_lines(f"see {line_name(7)}", STARTS) == "see cell 4, line 2"
    assert place_lines(line_names([2, 3, 6, 7]), STARTS) == (
        "cell 2, lines 2-3 and cell 4, lines 1-2"
    )


def test_positions_and_paths() -> None:
    assert cell_position(STARTS, 5) == (2, 5)
    assert cell_position(STARTS, 6) == (4, 1)
    assert cell_position((), 6) == (None, 6)
    assert path_line("a.ipynb", 8, STARTS) == "a.ipynb:cell 4:3"
    assert path_line("a.py", 8) == "a.py:8"
    assert named_line(8, STARTS) == "cell 4, line 3"


def test_text_without_marks_is_returned_as_it_is() -> None:
    text = "line 9 is already plain"
    assert place_lines(text, STARTS) is text


def test_rules_facts_and_fix_rounds_name_lines_through_line_names() -> None:
    """No message in the rules, the facts or the fix rounds spells "line N"
    itself: a notebook's reader would be sent to a line of the cells joined."""
    import ast
    from pathlib import Path

    import tfrewrite

    package = Path(tfrewrite.__file__).parent
    spelled = []
    for folder in ("rules", "facts", "pipeline"):
        for path in sorted((package / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.JoinedStr):
                    continue
                for before, after in zip(node.values, node.values[1:], strict=False):
                    if (
                        isinstance(before, ast.Constant)
                        and isinstance(before.value, str)
                        and before.value.rstrip().endswith(("line", "lines"))
                        and isinstance(after, ast.FormattedValue)
                    ):
                        spelled.append(f"{path.relative_to(package)}:{node.lineno}")
    assert spelled == []
