"""Jupyter notebooks as one Python module, and back.

Rules see a notebook the way the kernel runs it: its code cells concatenated
in order, so a loss defined in cell 3 and compiled in cell 7 is one program.
IPython syntax is kept out of the rules' way without losing a byte of it:

* a line magic, a shell escape or a help query (`%matplotlib inline`,
  `!pip install x`, `files = !ls`, `model.fit?`) is replaced in the Python
  view by a placeholder import that no rule reports and that is put back,
  byte for byte, when the notebook is written;
* a cell magic (`%%bash`, `%%writefile`) makes the whole cell not Python: it
  is left out of the view (`%%time`-style magics whose body is Python keep
  their body);
* a cell that still does not parse on its own (top-level `await`, a syntax
  error) is left out too, so one odd cell never stops the run.

Writing back changes only the `source` of the cells whose text changed, by
replacing that JSON value in the file's own text: outputs, execution counts,
metadata, key order, indentation and the trailing newline stay as they were,
and `source` keeps its form (a list of lines or one string). Lines a fix
inserted between two cells go to the later cell, except imports, which join
the cell that holds the imports before them; a fix whose edit spans two cells
is refused rather than guessed.

Positions in the Python view map back to (cell, line in cell); cells are
numbered from 1 among all cells of the notebook, as Ruff numbers them.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from tfrewrite.workspace.line_names import CellStarts, cell_position

NOTEBOOK_SUFFIX = ".ipynb"
# Cell magics whose body is Python: the first line is masked, the body analysed.
PYTHON_BODY_CELL_MAGICS = frozenset(
    {"time", "timeit", "capture", "prun", "debug", "tensorflow_version"}
)
# An import, so that a magic at the top of the import cell (`%matplotlib
# inline`) keeps that cell the module's import block: added imports join it.
_PLACEHOLDER = "import __tfrewrite_ipython_line_{}__"
_PLACEHOLDER_RE = re.compile(r"^(\s*)import __tfrewrite_ipython_line_(\d+)__\s*$")
_IMPORT_RE = re.compile(r"^\s*(import\s|from\s+\S+\s+import\s)")
_HELP_RE = re.compile(r"^\s*(\?\??[\w.]+|[\w.]+\?\??)\s*$")
_ASSIGNED_MAGIC_RE = re.compile(r"^\s*[\w.,\s()\[\]]+=\s*[%!]")


class NotebookError(ValueError):
    """A file that is not a notebook tfrewrite can read; never written to."""


@dataclass
class _Cell:
    index: int  # position among all cells, 0-based
    source_span: tuple[int, int]  # character span of the JSON `source` value
    as_list: bool  # `source` is a list of lines (else one string)
    text: str  # the cell's source as one string
    view_lines: list[str] = field(default_factory=list)  # masked, each ending in "\n"
    start: int = 0  # 0-based first line in the Python view


@dataclass
class Notebook:
    """A parsed notebook: its raw text, its code cells and their Python view."""

    raw: str
    cells: list[_Cell]
    masked: list[str]  # placeholder number -> the original line (without newline)
    python: str  # the Python view rules see
    ensure_ascii: bool

    # -- reading -------------------------------------------------------------------
    @classmethod
    def parse(cls, data: bytes | str) -> Notebook:
        """Read a notebook; raise `NotebookError` saying what is wrong."""
        if isinstance(data, bytes):
            try:
                raw = data.decode("utf-8-sig")
            except UnicodeDecodeError as err:
                raise NotebookError(f"not UTF-8 text: {err}") from None
        else:
            raw = data
        try:
            document = json.loads(raw)
        except json.JSONDecodeError as err:
            raise NotebookError(
                f"invalid JSON at line {err.lineno} column {err.colno}: {err.msg}"
            ) from None
        if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
            raise NotebookError("not a Jupyter notebook (no `cells` list)")
        major = document.get("nbformat")
        if not isinstance(major, int) or major < 4:
            raise NotebookError(
                f"nbformat {major} is not supported: only nbformat 4 notebooks "
                "(open and save it in a current Jupyter to convert it)"
            )
        spans = _source_spans(raw)
        cells: list[_Cell] = []
        for i, cell in enumerate(document["cells"]):
            if not isinstance(cell, dict):
                raise NotebookError(f"cell {i + 1}: not a JSON object")
            source = cell.get("source", "")
            if isinstance(source, list) and all(isinstance(s, str) for s in source):
                text, as_list = "".join(source), True
            elif isinstance(source, str):
                text, as_list = source, False
            else:
                raise NotebookError(f"cell {i + 1}: `source` is not text")
            if cell.get("cell_type") != "code":
                continue
            if i not in spans:
                raise NotebookError(f"cell {i + 1}: cannot locate its `source`")
            cells.append(_Cell(i, spans[i], as_list, text))
        notebook = cls(raw, [], [], "", _uses_ascii_escapes(raw))
        if _is_python(document):
            notebook._build_view(cells)
        return notebook

    def _build_view(self, cells: list[_Cell]) -> None:
        lines: list[str] = []
        for cell in cells:
            view = self._mask(cell.text)
            if view is None:
                continue
            cell.view_lines = view
            cell.start = len(lines)
            lines.extend(view)
            self.cells.append(cell)
        self.python = "".join(lines)

    def _mask(self, text: str) -> list[str] | None:
        """The cell's lines with IPython syntax replaced by placeholders, or
        None when the cell is not Python."""
        lines = text.splitlines(keepends=True)
        if not lines:
            return None
        lines = [line if line.endswith("\n") else line + "\n" for line in lines]
        out: list[str] = []
        masked_here: list[str] = []
        first = lines[0].strip()
        start = 0
        if first.startswith("%%"):
            name = first[2:].split(maxsplit=1)[0] if first[2:].strip() else ""
            if name not in PYTHON_BODY_CELL_MAGICS:
                return None
            out.append(self._placeholder("", lines[0], masked_here))
            start = 1
        continuation = False
        for line in lines[start:]:
            stripped = line.strip()
            if continuation or _is_ipython_line(stripped):
                indent = line[: len(line) - len(line.lstrip())]
                out.append(self._placeholder(indent, line, masked_here))
                continuation = stripped.endswith("\\")
            else:
                out.append(line)
        if not _parses("".join(out)):
            del self.masked[len(self.masked) - len(masked_here) :]
            return None
        return out

    def _placeholder(self, indent: str, line: str, masked_here: list[str]) -> str:
        self.masked.append(line.rstrip("\n"))
        masked_here.append(line)
        return f"{indent}{_PLACEHOLDER.format(len(self.masked) - 1)}\n"

    # -- positions -----------------------------------------------------------------
    @property
    def cell_starts(self) -> CellStarts:
        """Where each analysed cell starts in the Python view: what names a
        line of the view for a reader of the notebook (`line_names`)."""
        return tuple((cell.index + 1, cell.start) for cell in self.cells)

    def cell_position(self, line: int) -> tuple[int, int]:
        """(cell number from 1, line in the cell from 1) of a 1-based line of
        the Python view."""
        cell, in_cell = cell_position(self.cell_starts, line)
        return (1 if cell is None else cell), in_cell

    def runnable_python(self) -> str:
        """The Python view with IPython lines turned into `pass`: what
        `verify` loads (it never runs magics or shell commands)."""
        out = []
        for line in self.python.splitlines(keepends=True):
            match = _PLACEHOLDER_RE.match(line)
            out.append(f"{match.group(1)}pass\n" if match else line)
        return "".join(out)

    def cell_sources(self) -> dict[int, str]:
        """Cell number (from 1) -> source, for every analysed code cell."""
        return {cell.index + 1: cell.text for cell in self.cells}

    def source_lines(self) -> dict[int, tuple[int, int]]:
        """Cell number (from 1) -> first and last line (1-based) of its JSON
        `source` value in the file's text, for every analysed code cell: a
        diff of the file names the cells its hunks change."""
        lines = {}
        for cell in self.cells:
            begin, end = cell.source_span
            first = self.raw.count("\n", 0, begin) + 1
            lines[cell.index + 1] = (first, first + self.raw.count("\n", begin, end))
        return lines

    # -- writing -------------------------------------------------------------------
    def with_python(self, python: str) -> Notebook:
        """The notebook whose Python view is `python` (the view after fixes).
        Raises `NotebookError` when a change cannot be placed in one cell."""
        new_texts = self._split(python)
        pieces: list[str] = []
        position = 0
        for cell in self.cells:
            text = new_texts[cell.index]
            if text == cell.text:
                continue
            begin, end = cell.source_span
            pieces.append(self.raw[position:begin])
            pieces.append(self._render_source(cell, text))
            position = end
        pieces.append(self.raw[position:])
        return Notebook.parse("".join(pieces))

    def cell_texts_for(self, python: str) -> dict[int, tuple[str, str]]:
        """Cell number -> (old source, new source) for the cells `python` changes."""
        new_texts = self._split(python)
        return {
            cell.index + 1: (cell.text, new_texts[cell.index])
            for cell in self.cells
            if new_texts[cell.index] != cell.text
        }

    def _split(self, python: str) -> dict[int, str]:
        """Distribute the lines of a new Python view over the cells."""
        old = [line for cell in self.cells for line in cell.view_lines]
        owner = [cell.index for cell in self.cells for _ in cell.view_lines]
        new = python.splitlines(keepends=True)
        assigned: dict[int, list[str]] = {cell.index: [] for cell in self.cells}
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    assigned[owner[i]].append(new[j])
            elif tag == "replace":
                cells = sorted(set(owner[i1:i2]))
                if len(cells) > 1:
                    raise NotebookError(
                        "a fix changes lines of cells "
                        + " and ".join(str(c + 1) for c in cells)
                        + " at once; apply it by hand or merge the cells"
                    )
                assigned[cells[0]].extend(new[j1:j2])
            elif tag == "insert":
                self._place_insertion(assigned, old, owner, i1, new[j1:j2])
        for cell in self.cells:
            assigned[cell.index] = _without_added_edge_blanks(assigned[cell.index], cell.view_lines)
        return {index: self._unmask(lines, index) for index, lines in assigned.items()}

    def _place_insertion(
        self,
        assigned: dict[int, list[str]],
        old: Sequence[str],
        owner: Sequence[int],
        at: int,
        inserted: Sequence[str],
    ) -> None:
        """Give lines a fix inserted to the cell they belong to. Inserted at a
        cell boundary, lines that go on with the earlier cell's last block (an
        extracted step's `return`, and the loop moved after it, matched by the
        diff as inserted there because the step's body kept the loop body's
        lines) finish that cell: a cell never opens with an indented line."""
        cell = self._insertion_cell(old, owner, at, inserted)
        before = owner[at - 1] if 0 < at < len(old) else cell
        if cell == before or not _opens_indented(inserted):
            assigned[cell].extend(inserted)
            return
        for split in range(len(inserted), 0, -1):
            rest = inserted[split:]
            kept = "".join([*assigned[before], *inserted[:split]])
            if _opens_indented(rest) or not _parses(kept):
                continue
            assigned[before].extend(inserted[:split])
            assigned[cell].extend(rest)
            return
        assigned[cell].extend(inserted)

    def _insertion_cell(
        self, old: Sequence[str], owner: Sequence[int], at: int, inserted: Sequence[str]
    ) -> int:
        if at == 0:
            return owner[0]
        if at == len(old):
            return owner[-1]
        before, after = owner[at - 1], owner[at]
        if before == after:
            return before
        imports = all(_IMPORT_RE.match(line) or not line.strip() for line in inserted)
        if imports and _IMPORT_RE.match(old[at - 1]):
            return before
        return after

    def _unmask(self, lines: list[str], index: int) -> str:
        out = []
        for line in lines:
            match = _PLACEHOLDER_RE.match(line)
            out.append(self.masked[int(match.group(2))] + "\n" if match else line)
        original = next(cell.text for cell in self.cells if cell.index == index)
        # Cells end as they ended (Jupyter writes no final newline); blank
        # lines a fix left at a cell's end go too.
        trailing = len(original) - len(original.rstrip("\n"))
        return "".join(out).rstrip("\n") + "\n" * trailing

    def _render_source(self, cell: _Cell, text: str) -> str:
        if not cell.as_list:
            return json.dumps(text, ensure_ascii=self.ensure_ascii)
        lines = text.splitlines(keepends=True)
        old = self.raw[cell.source_span[0] : cell.source_span[1]]
        match = re.match(r"\[(\s*)", old)
        lead = match.group(1) if match else ""
        closing = old[len(old.rstrip("]").rstrip()) : -1] if old.endswith("]") else ""
        if not lines:
            return "[]"
        if not lead:  # `[]` before, or everything on one line
            lead, closing = _list_layout(self.raw, cell.source_span[0])
        items = [json.dumps(line, ensure_ascii=self.ensure_ascii) for line in lines]
        return "[" + lead + ("," + lead).join(items) + closing + "]"

    def text(self) -> str:
        return self.raw


def _opens_indented(lines: Sequence[str]) -> bool:
    """Whether the first non-blank line is indented: it goes on with a block."""
    first = next((line for line in lines if line.strip()), "")
    return first[:1].isspace()


def _without_added_edge_blanks(lines: list[str], original: Sequence[str]) -> list[str]:
    """A cell's new lines without the blank lines a fix put at its start or
    end (the two blank lines before an inserted `def` are PEP 8 in a file,
    noise at the top of a cell), unless the cell had them itself."""
    start, end = 0, len(lines)
    if original and original[0].strip():
        while start < end and not lines[start].strip():
            start += 1
    if original and original[-1].strip():
        while end > start and not lines[end - 1].strip():
            end -= 1
    return lines[start:end]


def _list_layout(raw: str, value_start: int) -> tuple[str, str]:
    """Whitespace before the first item and before `]` for a list value that
    had none to copy: one level deeper than the `"source"` key's line."""
    line = raw[raw.rfind("\n", 0, value_start) + 1 : value_start]
    key_indent = line[: len(line) - len(line.lstrip())]
    step = _indent_step(raw)
    return "\n" + key_indent + step, "\n" + key_indent


def _indent_step(raw: str) -> str:
    match = re.search(r"\{\n( +)\"", raw)
    return match.group(1) if match else " "


def _uses_ascii_escapes(raw: str) -> bool:
    """Whether the file escapes non-ASCII characters (`\\u00e9`) rather than
    writing them: keep whichever the file does."""
    return bool(re.search(r"\\u[0-9a-fA-F]{4}", raw)) and raw.isascii()


def _is_python(document: dict) -> bool:  # type: ignore[type-arg]
    metadata = document.get("metadata") or {}
    language = (metadata.get("language_info") or {}).get("name") or (
        metadata.get("kernelspec") or {}
    ).get("language")
    return language is None or str(language).lower() in ("python", "python3", "ipython")


def _is_ipython_line(stripped: str) -> bool:
    if not stripped or stripped.startswith("#"):
        return False
    if stripped[0] in "%!":
        return True
    if _HELP_RE.match(stripped):
        return True
    return bool(_ASSIGNED_MAGIC_RE.match(stripped)) and not _parses(stripped + "\n")


def _parses(text: str) -> bool:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return not _has_top_level_await(tree)


def _has_top_level_await(tree: ast.Module) -> bool:
    """`await` outside any function: IPython runs it, Python does not parse it
    as a module."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _source_spans(raw: str) -> dict[int, tuple[int, int]]:
    """Character spans of each cell's `source` value in the notebook's text,
    found by scanning the JSON (cells[i].source), keyed by cell index."""
    decoder = json.JSONDecoder()
    spans: dict[int, tuple[int, int]] = {}

    def skip_ws(i: int) -> int:
        while i < len(raw) and raw[i] in " \t\r\n":
            i += 1
        return i

    def object_members(i: int):  # type: ignore[no-untyped-def]
        """Yield (key, value start, value end) of the object starting at `i`."""
        i = skip_ws(i + 1)
        while i < len(raw) and raw[i] != "}":
            key, i = json.decoder.scanstring(raw, i + 1)  # type: ignore[attr-defined]
            i = skip_ws(skip_ws(i) + 1)  # the colon
            _, end = decoder.raw_decode(raw, i)
            yield key, i, end
            i = skip_ws(end)
            if raw[i] == ",":
                i = skip_ws(i + 1)

    top = skip_ws(0)
    for key, start, _end in object_members(top):
        if key != "cells":
            continue
        i = skip_ws(start + 1)
        index = 0
        while raw[i] != "]":
            _, cell_end = decoder.raw_decode(raw, i)
            if raw[i] == "{":
                for member, value_start, value_end in object_members(i):
                    if member == "source":
                        spans[index] = (value_start, value_end)
            index += 1
            i = skip_ws(cell_end)
            if raw[i] == ",":
                i = skip_ws(i + 1)
    return spans


def cells_of(path: str, text: str) -> CellStarts:
    """Where each cell of the notebook `text` starts in its Python view (as
    `python_of` gives it); nothing for a plain Python file."""
    if not path.endswith(NOTEBOOK_SUFFIX):
        return ()
    return Notebook.parse(text).cell_starts


def python_of(path: str, text: str) -> str:
    """The Python that `verify` loads from a file: its text, or for a notebook
    its code cells in order with IPython lines made `pass`."""
    if not path.endswith(NOTEBOOK_SUFFIX):
        return text
    return Notebook.parse(text).runnable_python()
