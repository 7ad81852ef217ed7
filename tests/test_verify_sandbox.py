"""Verify runs the user's code in a temporary mirror of the script's folder:
relative reads see the project, relative writes land in the mirror (removed
afterwards), Python-level writes through a link copy the file first, and a
write into the project by absolute path is refused. Modules verify loads have
a real `__file__` holding their own text."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from tfrewrite.verify import loader, sandbox


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "x.txt").write_text("1 2 3\n")
    (project / "result").mkdir()
    (project / "notes.txt").write_text("keep\n")
    return project


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): (p.read_text() if p.is_file() else "<dir>")
        for p in sorted(folder.rglob("*"))
    }


def test_relative_writes_land_in_the_mirror_and_reads_see_the_project(tmp_path: Path) -> None:
    project = _project(tmp_path)
    before = _snapshot(project)
    start = os.getcwd()
    with sandbox.isolated(str(project), [str(project)]) as temp:
        assert os.getcwd() == temp
        assert Path("data/x.txt").read_text() == "1 2 3\n"
        Path("result/x.txt").write_text("written")  # an existing folder of the project
        os.makedirs("./out/deep", exist_ok=True)  # a new one
        Path("out/deep/y.txt").write_text("y")
        with open("notes.txt", "a") as handle:  # a linked file: copied first
            handle.write("more\n")
        assert Path("notes.txt").read_text() == "keep\nmore\n"
        os.remove("data/x.txt")  # removes the link, not the data
    assert os.getcwd() == start
    assert not os.path.exists(temp)
    assert _snapshot(project) == before


def test_a_write_into_the_project_by_absolute_path_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path)
    before = _snapshot(project)
    with sandbox.isolated(str(project), [str(project)]):
        with pytest.raises(PermissionError, match="does not let the code it runs change"):
            (project / "result" / "x.txt").write_text("no")
        with pytest.raises(PermissionError):
            os.remove(project / "notes.txt")
        assert (project / "notes.txt").read_text() == "keep\n"  # reading is fine
    assert _snapshot(project) == before
    # Outside a sandbox nothing is guarded.
    (project / "result" / "x.txt").write_text("yes")


def test_a_folder_beyond_the_mirror_budget_is_linked_and_still_guarded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path)
    monkeypatch.setattr(sandbox, "MIRRORED", 1)
    with sandbox.isolated(str(project), [str(project)]):
        assert Path("data/x.txt").read_text() == "1 2 3\n"
        with pytest.raises(PermissionError):
            Path("data/new.txt").write_text("no")
    assert not (project / "data" / "new.txt").exists()


SCRIPT = textwrap.dedent(
    """
    import os

    HERE = os.path.dirname(__file__)


    def numbers():
        with open(os.path.join(HERE, "data", "x.txt")) as handle:
            return [int(v) for v in handle.read().split()]


    def needs_file(function):
        # Like typeguard's @typechecked: re-reads the module's source file.
        import inspect, sys
        source = inspect.getsource(sys.modules[function.__module__])
        assert function.__name__ in source and "VERSION" in source
        return function


    @needs_file
    def total():
        return sum(numbers()) * VERSION
    """
)


def test_loaded_modules_have_a_real_file_with_their_own_text(tmp_path: Path) -> None:
    project = _project(tmp_path)
    path = project / "script.py"
    original = SCRIPT + "\nVERSION = 1\n"
    rewrite = SCRIPT + "\nVERSION = 2\n"
    path.write_text(original)
    with sandbox.isolated(str(project), [str(project)]):
        first = loader.load_function(original, "total", "original", str(path))
        second = loader.load_function(rewrite, "total", "rewrite", str(path))
        assert first.module.__file__ == str(path)
        assert os.path.dirname(second.module.__file__) == sandbox.current()
        assert Path(second.module.__file__).read_text() == rewrite
        assert first.function() == 6
        assert second.function() == 12
    assert path.read_text() == original


def test_the_codes_own_temporary_files_are_allowed(tmp_path: Path) -> None:
    """A project folder above the system's temporary folder (an import root
    found far up) does not stop `tempfile` from working."""
    import tempfile

    project = _project(tmp_path)
    above_temp = os.path.dirname(os.path.realpath(tempfile.gettempdir()))
    with sandbox.isolated(str(project), [str(project), above_temp]):
        with tempfile.TemporaryDirectory() as scratch:
            Path(scratch, "x.txt").write_text("ok")


def test_a_folder_the_script_expects_is_named_with_what_to_create(tmp_path: Path) -> None:
    """A script that saves into `./result/`, a folder its author made by hand:
    the result says which folder to create beside the script, and where the
    script failed."""
    from tfrewrite.verify import caller_capture, callers

    project = _project(tmp_path)
    source = textwrap.dedent(
        """
        def train(epochs):
            return epochs


        def main():
            with open("./samples/0.png", "wb") as handle:
                handle.write(b"")
            train(3)
        """
    )
    path = project / "gan.py"
    path.write_text(source)
    found = callers.find_caller(str(path), source, "train")
    assert found is not None
    with sandbox.isolated(str(project), [str(project)]):
        with pytest.raises(caller_capture.CallerProblem) as raised:
            caller_capture.capture_arguments(found, source, str(path), None, "original", seconds=10)
    message = str(raised.value)
    assert "raised FileNotFoundError" in message and "at gan.py, line 7" in message, message
    assert "there is no folder `samples` beside gan.py: create it there" in message, message
    assert not (project / "samples").exists()


def test_refused_writes_are_remembered_per_sandbox(tmp_path: Path) -> None:
    project = _project(tmp_path)
    with sandbox.isolated(str(project), [str(project)]):
        for _ in range(2):
            with pytest.raises(PermissionError):
                (project / "result" / "x.txt").write_text("no")
        Path("result/y.txt").write_text("fine")  # relative: in the mirror, not refused
        assert sandbox.refused_writes() == [str((project / "result" / "x.txt").resolve())]
        with sandbox.isolated(str(project), [str(project)]):
            assert sandbox.refused_writes() == []
    assert sandbox.refused_writes() == []


def test_the_worker_reports_the_project_files_the_code_tried_to_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request whose code writes into the project by absolute path (and
    carries on when refused): the result warns, naming the file."""
    from tfrewrite.verify import project_imports, worker

    project = _project(tmp_path)
    target = project / "result" / "curve.png"

    def verify(data: dict) -> dict:  # type: ignore[type-arg]
        assert os.getcwd() == sandbox.current()
        try:
            target.write_bytes(b"png")
        except PermissionError:
            pass
        return {"verdict": "equivalent", "warnings": ["kept"]}

    monkeypatch.setattr(worker, "_verify", verify)
    monkeypatch.setattr(project_imports, "enter_project", lambda sys_path: None)
    request = {"path": str(project / "train.py"), "sys_path": [str(project)]}
    result = worker._handle({"request": request})
    assert result["warnings"][0] == "kept"
    assert str(target.resolve()) in result["warnings"][1]
    assert "refused" in result["warnings"][1]
    assert not target.exists()


def test_workers_start_without_the_project_on_their_path(tmp_path: Path) -> None:
    """The worker's start drops the working directory (the user's project)
    from `sys.path` before importing anything: a project `random/` does not
    replace the standard library's under TensorFlow."""
    import subprocess
    import sys

    from tfrewrite.verify.pool import WORKER_START

    for name in ("random", "logging"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise RuntimeError('shadowed')\n")
    start = WORKER_START.split("from tfrewrite")[0]
    completed = subprocess.run(
        [sys.executable, "-c", start + "import random, logging, tempfile\nprint('ok')\n"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"},
        timeout=60,
    )
    assert completed.stdout.strip() == "ok", completed.stderr
