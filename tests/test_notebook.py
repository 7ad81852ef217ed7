"""Notebooks as one Python module: the view rules see, positions, and writes
that change nothing but the sources of the cells a fix changed."""

from __future__ import annotations

import json

import nbformat
import pytest
from notebook_files import make_notebook

from tfrewrite.workspace.notebook import Notebook, NotebookError

TUTORIAL = [
    ("markdown", "# Custom training\n\nA *tape* loop."),
    ("code", "%matplotlib inline\nimport numpy as np\nimport tensorflow as tf"),
    ("code", "!pip install -q tensorflow-datasets\nx = np.ones(3)\n"),
    ("code", "%%bash\necho hello"),
    ("code", "@tf.function\ndef loss_fn(y_true, y_pred):\n    print(y_pred)\n    return y_pred"),
    ("code", "model.fit?\nawait something()"),
    ("code", "%%time\nloss_fn(x, x)"),
]


def test_view_concatenates_code_cells_and_masks_ipython_syntax() -> None:
    notebook = Notebook.parse(make_notebook(TUTORIAL))
    assert "import tensorflow as tf" in notebook.python
    assert "%matplotlib" not in notebook.python and "!pip" not in notebook.python
    assert "echo hello" not in notebook.python  # %%bash cell: not Python
    assert "await" not in notebook.python  # top-level await: cell left out
    assert "loss_fn(x, x)" in notebook.python  # %%time body is Python
    assert "# Custom training" not in notebook.python
    compile(notebook.python, "<view>", "exec")


def test_positions_map_to_cell_and_line() -> None:
    notebook = Notebook.parse(make_notebook(TUTORIAL))
    lines = notebook.python.splitlines()
    print_line = next(i for i, line in enumerate(lines, 1) if "print(y_pred)" in line)
    assert notebook.cell_position(print_line) == (5, 3)
    tf_line = next(i for i, line in enumerate(lines, 1) if "import tensorflow" in line)
    assert notebook.cell_position(tf_line) == (2, 3)


def test_unchanged_view_writes_identical_bytes() -> None:
    raw = make_notebook(TUTORIAL)
    notebook = Notebook.parse(raw)
    assert notebook.with_python(notebook.python).raw == raw


@pytest.mark.parametrize("indent", [1, 2])
@pytest.mark.parametrize("as_list", [True, False])
def test_a_fix_changes_only_that_cells_source(indent: int, as_list: bool) -> None:
    raw = make_notebook(TUTORIAL, indent=indent, as_list=as_list)
    notebook = Notebook.parse(raw)
    fixed = notebook.with_python(notebook.python.replace("print(y_pred)", "tf.print(y_pred)"))
    before, after = json.loads(raw), json.loads(fixed.raw)
    assert after["cells"][4]["source"] == (
        [
            "@tf.function\n",
            "def loss_fn(y_true, y_pred):\n",
            "    tf.print(y_pred)\n",
            "    return y_pred",
        ]
        if as_list
        else "@tf.function\ndef loss_fn(y_true, y_pred):\n    tf.print(y_pred)\n    return y_pred"
    )
    after["cells"][4]["source"] = before["cells"][4]["source"]
    assert after == before
    # Every byte outside the changed source is kept: the text differs only there.
    prefix = raw.index("print(y_pred)")
    assert fixed.raw[:prefix] == raw[:prefix]
    assert fixed.raw.endswith(raw[prefix + len("print(y_pred)") :])
    nbformat.validate(nbformat.reads(fixed.raw, as_version=4))


def test_magic_lines_come_back_byte_for_byte() -> None:
    cells = [("code", "import tensorflow as tf\n%load_ext tensorboard\nx = 1\n!ls -la  # list")]
    raw = make_notebook(cells)
    notebook = Notebook.parse(raw)
    fixed = notebook.with_python(notebook.python.replace("x = 1", "x = 2"))
    source = json.loads(fixed.raw)["cells"][0]["source"]
    assert source == [
        "import tensorflow as tf\n",
        "%load_ext tensorboard\n",
        "x = 2\n",
        "!ls -la  # list",
    ]


def test_added_import_joins_the_import_cell() -> None:
    raw = make_notebook([("code", "import tensorflow as tf\n"), ("code", "print(1)\n")])
    notebook = Notebook.parse(raw)
    view = notebook.python.replace(
        "import tensorflow as tf\n", "import tensorflow as tf\nimport sys\n"
    )
    cells = json.loads(notebook.with_python(view).raw)["cells"]
    assert cells[0]["source"] == ["import tensorflow as tf\n", "import sys\n"]
    assert cells[1]["source"] == ["print(1)\n"]


def test_code_inserted_before_a_cells_first_statement_stays_in_that_cell() -> None:
    raw = make_notebook([("code", "import tensorflow as tf\n"), ("code", "y = f(x)\n")])
    notebook = Notebook.parse(raw)
    view = notebook.python.replace("y = f(x)\n", "def branch():\n    return 1\n\ny = f(x)\n")
    cells = json.loads(notebook.with_python(view).raw)["cells"]
    assert cells[0]["source"] == ["import tensorflow as tf\n"]
    assert cells[1]["source"] == ["def branch():\n", "    return 1\n", "\n", "y = f(x)\n"]


def test_blank_lines_a_fix_puts_at_a_cells_edges_are_dropped() -> None:
    """Two blank lines before an inserted top-level `def` are PEP 8 in a
    file; at the top of a cell they are noise. A cell's own blank lines stay."""
    raw = make_notebook(
        [("code", "import tensorflow as tf\n"), ("code", "y = f(x)\n"), ("code", "\nz = 1\n")]
    )
    notebook = Notebook.parse(raw)
    view = notebook.python.replace(
        "y = f(x)\n", "\n\ndef branch():\n    return 1\n\n\ny = f(x)\n\n\n"
    ).replace("\nz = 1\n", "\n\nz = 1\n")
    cells = json.loads(notebook.with_python(view).raw)["cells"]
    assert cells[0]["source"] == ["import tensorflow as tf\n"]
    assert cells[1]["source"][0] == "def branch():\n"
    assert cells[1]["source"][-1] == "y = f(x)\n"
    assert cells[2]["source"][0] == "\n"


def test_an_edit_spanning_two_cells_is_refused() -> None:
    raw = make_notebook([("code", "a = 1\n"), ("code", "b = 2\n")])
    notebook = Notebook.parse(raw)
    with pytest.raises(NotebookError, match="cells 1 and 2"):
        notebook.with_python("a, b = 1, 2\n")


def test_a_cell_that_gains_its_first_lines_gets_a_list_laid_out_like_the_file() -> None:
    raw = make_notebook([("code", "import tensorflow as tf\n"), ("code", "")], indent=2)
    notebook = Notebook.parse(raw)
    assert len(notebook.cells) == 1  # an empty cell has nothing to analyse
    fixed = notebook.with_python("import tensorflow as tf\nx = 1\n")
    nbformat.validate(nbformat.reads(fixed.raw, as_version=4))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "invalid JSON at line 1"),
        ('{"cells": [], "nbformat": 3, "nbformat_minor": 0, "metadata": {}}', "nbformat 3"),
        ('{"worksheets": []}', "not a Jupyter notebook"),
        ("[1, 2]", "not a Jupyter notebook"),
        (
            '{"cells": [{"cell_type": "code", "source": 5, "metadata": {}}], "nbformat": 4,'
            ' "nbformat_minor": 5, "metadata": {}}',
            "cell 1: `source` is not text",
        ),
    ],
)
def test_bad_notebooks_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(NotebookError, match=message):
        Notebook.parse(text)


def test_a_notebook_in_another_language_has_no_python() -> None:
    document = json.loads(make_notebook([("code", "x <- 1")]))
    document["metadata"]["language_info"]["name"] = "R"
    document["metadata"]["kernelspec"]["language"] = "R"
    assert Notebook.parse(json.dumps(document)).python == ""


def test_non_ascii_kept_as_the_file_wrote_it() -> None:
    raw = make_notebook([("code", 'label = "héllo"\nprint(label)\n')])
    notebook = Notebook.parse(raw)
    fixed = notebook.with_python(notebook.python.replace("print(label)", "tf.print(label)"))
    assert '"label = \\"héllo\\"\\n"' in fixed.raw


def test_runnable_python_has_no_ipython_lines() -> None:
    notebook = Notebook.parse(make_notebook(TUTORIAL))
    runnable = notebook.runnable_python()
    assert "__tfrewrite" not in runnable
    assert len(runnable.splitlines()) == len(notebook.python.splitlines())
    compile(runnable, "<runnable>", "exec")


def test_lines_that_continue_a_cells_last_block_stay_in_that_cell() -> None:
    """An extracted step whose body keeps the loop body's indentation matches
    the old loop lines, so the diff sees the step's `return` and the moved
    loop as inserted at the cell's end: they finish that cell's `def` and
    stay with it, never opening the next cell with an indented line."""
    loop = "n = 0\nfor x in xs:\n    n += 1\n    y = g(x)\n    z = h(y)\n    k(z)"
    raw = make_notebook([("code", loop), ("code", "done()\n")])
    notebook = Notebook.parse(raw)
    view = notebook.python.replace(
        "for x in xs:\n    n += 1\n    y = g(x)\n    z = h(y)\n    k(z)\n",
        "\n\ndef step(x):\n    y = g(x)\n    z = h(y)\n    k(z)\n    return y\n\n\n"
        "for x in xs:\n    n += 1\n    y = step(x)\n",
    )
    cells = json.loads(notebook.with_python(view).raw)["cells"]
    assert "".join(cells[0]["source"]).endswith("for x in xs:\n    n += 1\n    y = step(x)")
    assert cells[1]["source"] == ["done()\n"]
