"""The cache: an unchanged tree is answered from it; anything a file's
findings depend on — its content, the settings, tfrewrite's version, the
facts other modules give it — makes that file be checked again."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tfrewrite.cli import app
from tfrewrite.findings import Applicability
from tfrewrite.pipeline import cache as cache_module
from tfrewrite.pipeline.cache import CACHE_DIR_NAME, Cache
from tfrewrite.pipeline.engine import InputFile, RunOptions, run
from tfrewrite.rules import select_rules

LOSSES = textwrap.dedent(
    """\
    import tensorflow as tf


    def noisy_loss(y_true, y_pred):
        print("loss", y_pred)
        return tf.reduce_mean(tf.square(y_true - y_pred))
    """
)
TRAIN = textwrap.dedent(
    """\
    import tensorflow as tf
    from losses import noisy_loss

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss=noisy_loss)
    """
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "losses.py").write_text(LOSSES)
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def check(root: Path, codes: tuple[str, ...] = ("TFR",), cache_dir: Path | None = None):  # type: ignore[no-untyped-def]
    options = RunOptions(
        rule_codes=tuple(r.code for r in select_rules(list(codes), [])), root=str(root)
    )
    files = [InputFile(str(p)) for p in sorted(root.glob("*.py"))]
    cache = Cache(cache_dir or root / CACHE_DIR_NAME, options)
    return run(files, options, jobs=1, cache=cache)


def codes_by_file(result) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    return {Path(r.path).name: [f.code for f in r.findings] for r in result.files}


def test_an_unchanged_tree_is_answered_from_the_cache(project: Path) -> None:
    first = check(project)
    assert codes_by_file(first)["losses.py"] == ["TFR103"]
    assert first.cached == 0 and first.parsed > 0
    second = check(project)
    assert codes_by_file(second) == codes_by_file(first)
    assert second.cached == len(second.files) and second.parsed == 0
    assert second.findings[0].message == first.findings[0].message
    assert (project / CACHE_DIR_NAME / ".gitignore").read_text().strip().endswith("*")


def test_a_changed_file_is_checked_again(project: Path) -> None:
    check(project)
    (project / "losses.py").write_text(LOSSES.replace('print("loss", y_pred)', "pass"))
    result = check(project)
    assert codes_by_file(result)["losses.py"] == []
    assert result.cached == 1  # train.py: same content, same facts


def test_facts_from_another_module_invalidate_a_file(project: Path) -> None:
    """losses.py does not change; train.py stops compiling its loss, so the
    loss no longer runs traced and its `print` is no longer a finding."""
    assert codes_by_file(check(project))["losses.py"] == ["TFR103"]
    (project / "train.py").write_text(TRAIN.replace("loss=noisy_loss", 'loss="mse"'))
    assert codes_by_file(check(project))["losses.py"] == []
    (project / "train.py").write_text(TRAIN)
    assert codes_by_file(check(project))["losses.py"] == ["TFR103"]


def test_settings_are_part_of_the_key(project: Path) -> None:
    check(project)
    result = check(project, codes=("TFR2",))
    assert codes_by_file(result)["losses.py"] == []
    assert result.cached == 0


def test_a_new_version_does_not_read_an_old_cache(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check(project)
    monkeypatch.setattr(cache_module, "__version__", "999.0")
    result = check(project)
    assert result.cached == 0
    assert codes_by_file(result)["losses.py"] == ["TFR103"]


def test_a_corrupt_cache_is_ignored_and_rebuilt(project: Path) -> None:
    check(project)
    files = list((project / CACHE_DIR_NAME).rglob("*.json"))
    assert files
    for path in files:
        path.write_bytes(b'{"format": "tfrewrite-cache", "schema": 1, "kind": "run", "hashes": {')
    result = check(project)
    assert codes_by_file(result)["losses.py"] == ["TFR103"]
    assert check(project).cached == len(result.files)


def test_cli_cache_flags_setting_and_clean(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    runner = CliRunner()
    assert runner.invoke(app, ["check", "--no-cache", "."]).exit_code == 1
    assert not (project / CACHE_DIR_NAME).exists()
    (project / "pyproject.toml").write_text('[tool.tfrewrite]\ncache-dir = "build/tfr"\n')
    assert runner.invoke(app, ["check", "."]).exit_code == 1
    assert (project / "build" / "tfr" / ".gitignore").exists()
    out = runner.invoke(app, ["clean"])
    assert out.exit_code == 0 and "Removed" in out.output
    assert not (project / "build" / "tfr").exists()


def test_project_facts_write_only_the_fields_the_cache_keys_on(project: Path) -> None:
    """Pass 1 is a function of path and content; `compute_facts` may add to
    an index only the fields `job_key` fingerprints."""
    import copy
    import dataclasses

    from tfrewrite.facts.index import build_index
    from tfrewrite.facts.project import compute_facts
    from tfrewrite.pipeline.cache import PROJECT_FACT_FIELDS

    (project / "config.py").write_text("import tensorflow as tf\n\nLR = 0.1\n")
    (project / "loop.py").write_text(
        textwrap.dedent(
            """\
            import tensorflow as tf
            import config
            from losses import noisy_loss

            config.LR = 0.2

            @tf.function
            def decorated_loss(y_true, y_pred):
                return tf.reduce_mean(y_true - y_pred)

            def step(x, y, model, opt):
                with tf.GradientTape() as tape:
                    loss = decorated_loss(y, model(x)) + noisy_loss(y, model(x))
                opt.apply_gradients(zip(tape.gradient(loss, model.weights), model.weights))

            for x, y in tf.data.Dataset.range(3).batch(2):
                step(x, y, None, None)
            """
        )
    )
    indexes = [build_index(p.read_text(), str(p), p.stem) for p in sorted(project.glob("*.py"))]
    before = copy.deepcopy(indexes)
    compute_facts(indexes)
    changed = {
        f.name
        for old, new in zip(before, indexes, strict=True)
        for f in dataclasses.fields(new)
        if getattr(old, f.name) != getattr(new, f.name)
    }
    assert changed, "the example should exercise cross-module facts"
    assert changed <= set(PROJECT_FACT_FIELDS)


def test_rule_codes_known_without_loading_rules_match_the_rules() -> None:
    """`RULE_CODES`, known from the family entries before any rule module
    loads (a `check` answered from the cache loads none), are the codes of
    the loaded rules, in the same order."""
    from tfrewrite import rules

    assert rules.RULE_CODES == tuple(r.code for r in rules.ALL_RULES)


def test_other_tfrewrite_code_does_not_read_the_cache(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Developing from a clone keeps the version: the build stamp changes."""
    check(project)
    monkeypatch.setattr(cache_module, "_code_stamp", lambda: "another-build")
    assert check(project).cached == 0


@pytest.mark.parametrize(
    "content",
    [
        b"",  # an empty file (a run killed while writing, without our atomic rename)
        b"\xff\xfe not UTF-8",
        json.dumps(["a", "list"]).encode(),  # valid JSON of another shape
        json.dumps({"hashes": None, "results": ["not", "a", "dict"], "files": "nope"}).encode(),
        json.dumps({"results": {"k": 1}, "files": [1, 2, 3]}).encode(),
        json.dumps({"format": "tfrewrite-cache", "schema": 999, "kind": "run"}).encode(),
        b"[" * 100_000,  # nested deeper than the parser's recursion limit
    ],
    ids=["empty", "not-utf8", "a-list", "wrong-fields", "wrong-entries", "other-schema", "deep"],
)
def test_a_foreign_or_truncated_cache_is_ignored_and_rebuilt(project: Path, content: bytes) -> None:
    first = check(project)
    files = list((project / CACHE_DIR_NAME).rglob("*.json"))
    assert files
    for path in files:
        path.write_bytes(content)
    result = check(project)
    assert codes_by_file(result) == codes_by_file(first)
    assert check(project).cached == len(result.files)


def test_a_foreign_manifest_with_matching_hashes_is_not_trusted(project: Path) -> None:
    """Entries that are not results (another program wrote a file with the
    same hashes) are not returned as results."""
    check(project)
    (manifest,) = (project / CACHE_DIR_NAME).rglob("run-*.json")
    stored = json.loads(manifest.read_bytes())
    stored["files"] = ["not a result"]
    stored["results"] = dict.fromkeys(stored["results"], "not a result")
    manifest.write_text(json.dumps(stored))
    result = check(project)
    assert result.cached == 0
    assert codes_by_file(result)["losses.py"] == ["TFR103"]


def test_a_dependency_module_changing_its_facts_invalidates_only_its_dependents(
    project: Path,
) -> None:
    """train.py changes (it now compiles another loss): losses.py, unchanged,
    is checked again because the facts it gets changed; an unrelated module
    is answered from the cache."""
    (project / "unrelated.py").write_text("import tensorflow as tf\n\nX = tf.constant(1)\n")
    check(project)
    (project / "train.py").write_text(TRAIN.replace("loss=noisy_loss", 'loss="mse"'))
    result = check(project)
    assert codes_by_file(result)["losses.py"] == []
    assert result.cached == 1  # unrelated.py


def test_a_star_imported_module_changing_what_it_exports_invalidates_its_importers(
    tmp_path: Path,
) -> None:
    """`np` in model.py comes from `from utils import *`: once utils.py no
    longer imports NumPy as `np`, model.py's `np.mean` is no NumPy call."""
    (tmp_path / "utils.py").write_text("import numpy as np\nimport tensorflow as tf\n")
    (tmp_path / "model.py").write_text(
        "from utils import *\n\n\n@tf.function\ndef normalize(x):\n    return x - np.mean(x)\n"
    )
    assert codes_by_file(check(tmp_path, ("TFR104",)))["model.py"] == ["TFR104"]
    (tmp_path / "utils.py").write_text("import mynp as np\nimport tensorflow as tf\n")
    result = check(tmp_path, ("TFR104",))
    assert codes_by_file(result)["model.py"] == []


# -- a cache that cannot run code --------------------------------------------------------


class _Payload:
    """Unpickling this runs `os.system`: what a planted cache file would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (f"touch {self.marker}",))


def test_a_planted_pickle_is_never_loaded(project: Path, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    """Every cache file, and the names the cache used to have, replaced by a
    pickle that runs a command when loaded: the run never loads it."""
    marker = tmp_path_factory.mktemp("marker") / "ran"
    first = check(project)
    payload = pickle.dumps(_Payload(marker))
    (folder,) = (project / CACHE_DIR_NAME).glob("v*")
    targets = [*folder.glob("*.json"), folder / "indexes.pickle", folder / "run-x.pickle"]
    for path in targets:
        path.write_bytes(payload)
    result = check(project)
    assert not marker.exists()
    assert result.cached == 0
    assert codes_by_file(result) == codes_by_file(first)


def test_planted_json_naming_code_is_data_not_code(project: Path, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    """Entries of the right schema whose values name a callable and its
    arguments (as a `__reduce__` would) are not results: a miss, nothing runs."""
    marker = tmp_path_factory.mktemp("marker") / "ran"
    first = check(project)
    (manifest,) = (project / CACHE_DIR_NAME).rglob("run-*.json")
    stored = json.loads(manifest.read_text())
    code = {"__reduce__": ["os.system", [f"touch {marker}"]], "py/object": "os.system"}
    stored["files"] = [code for _ in stored["files"]]
    stored["results"] = dict.fromkeys(stored["results"], code)
    manifest.write_text(json.dumps(stored))
    (indexes,) = (project / CACHE_DIR_NAME).rglob("indexes.json")
    stored = json.loads(indexes.read_text())
    stored["entries"] = dict.fromkeys(stored["entries"], code)
    indexes.write_text(json.dumps(stored))
    result = check(project)
    assert not marker.exists()
    assert result.cached == 0
    assert codes_by_file(result) == codes_by_file(first)


def test_an_index_stored_under_another_path_is_not_used(project: Path) -> None:
    check(project)
    (indexes,) = (project / CACHE_DIR_NAME).rglob("indexes.json")
    stored = json.loads(indexes.read_text())
    for entry in stored["entries"].values():
        if isinstance(entry, dict):
            entry["path"] = "elsewhere.py"
    indexes.write_text(json.dumps(stored))
    (manifest,) = (project / CACHE_DIR_NAME).rglob("run-*.json")
    manifest.unlink()
    result = check(project)
    assert codes_by_file(result)["losses.py"] == ["TFR103"]


def _real_indexes() -> list:  # type: ignore[type-arg]
    from tfrewrite.facts.index import build_index, module_name_for
    from tfrewrite.pipeline.rule_pass import python_text

    repository = Path(__file__).parent.parent
    indexes = []
    for folder in (repository / "examples", repository / "tests" / "data" / "adversarial"):
        for path in sorted([*folder.rglob("*.py"), *folder.rglob("*.ipynb")]):
            try:
                source = python_text(str(path), path.read_bytes())
            except (ValueError, SyntaxError):
                continue  # files that are there to be unreadable
            indexes.append(build_index(source, str(path), module_name_for(path, folder)))
    return indexes


def test_real_indexes_round_trip_through_json() -> None:
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.workspace.json_codec import Codec

    codec = Codec(ModuleIndex)
    indexes = _real_indexes()
    assert len(indexes) > 20
    for index in indexes:
        stored = json.dumps(codec.encode(index, ModuleIndex))
        assert codec.decode(json.loads(stored), ModuleIndex) == index, index.path


def test_results_round_trip_through_json(project: Path) -> None:
    from tfrewrite.findings import FileResult
    from tfrewrite.workspace.json_codec import Codec

    options = RunOptions(
        rule_codes=tuple(r.code for r in select_rules(["TFR"], [])),
        root=str(project),
        want_edits=True,
    )
    files = [InputFile(str(p)) for p in sorted(project.glob("*.py"))]
    results = run(files, options, jobs=1).files
    assert any(f.fix and f.fix.edits for r in results for f in r.findings)
    codec = Codec(FileResult)
    stored = json.dumps(codec.encode(results, list[FileResult]))
    assert codec.decode(json.loads(stored), list[FileResult]) == results


def test_a_decoded_index_shares_nothing_with_its_stored_entry() -> None:
    """The project facts fill an index in after it is read: the entry the
    cache keeps (and writes back) must not change with it."""
    import dataclasses

    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.workspace.json_codec import Codec

    codec = Codec(ModuleIndex)
    index = max(
        _real_indexes(), key=lambda i: len(json.dumps(Codec(ModuleIndex).encode(i, ModuleIndex)))
    )
    stored = codec.encode(index, ModuleIndex)
    before = json.dumps(stored)
    decoded = codec.decode(stored, ModuleIndex)
    for f in dataclasses.fields(decoded):
        value = getattr(decoded, f.name)
        if isinstance(value, list):
            value.append("changed")
        elif isinstance(value, dict):
            for inner in value.values():
                if isinstance(inner, (list, dict)):
                    inner.clear()
            value["changed"] = "changed"
        elif isinstance(value, set):
            value.add("changed")
    assert json.dumps(stored) == before


@dataclasses.dataclass(frozen=True)
class _Leaf:
    """Hints of every kind the codec reads (module level: hints resolve here)."""

    kind: Applicability
    cells: dict[int, str]
    span: tuple[int | None, str] | None = None
    extra: Any = None


def test_the_codec_decodes_only_the_declared_shapes() -> None:
    from tfrewrite.findings import FileResult
    from tfrewrite.workspace.json_codec import Codec, DecodeError, EncodeError

    codec = Codec(_Leaf)
    leaf = _Leaf(Applicability.SAFE, {3: "x = 1"}, (None, "a"), "note")
    assert codec.decode(json.loads(json.dumps(codec.encode(leaf, _Leaf))), _Leaf) == leaf
    for bad in (
        {"kind": "safe", "cells": [[3, "x"]], "span": None},  # a field missing
        {"kind": "nope", "cells": [], "span": None, "extra": None},  # not an Applicability
        {"kind": "safe", "cells": [[True, "x"]], "span": None, "extra": None},  # bool for int
        {"kind": "safe", "cells": [], "span": [1, 2], "extra": None},  # int for str
        {"kind": "safe", "cells": [], "span": None, "extra": {"a": 1}},  # Any holds scalars
    ):
        with pytest.raises(DecodeError):
            codec.decode(bad, _Leaf)
    with pytest.raises(EncodeError):  # a dataclass outside the allowlist
        codec.encode(leaf, FileResult)
    with pytest.raises(EncodeError):
        codec.encode(_Leaf(Applicability.SAFE, {}, extra=object()), _Leaf)


def test_build_stamp_covers_every_module_of_the_package() -> None:
    """A changed rule, fact or pipeline module is a new build."""
    package = cache_module.package_folder()
    assert (package / "__init__.py").is_file()
    for module in ("rules/base.py", "facts/index.py", "pipeline/engine.py", "cli.py"):
        assert (package / module).is_file(), module


def test_a_file_named_on_the_command_line_is_not_answered_by_a_folder_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder run skips a file that imports no TensorFlow unparsed; the
    same file named on the command line is parsed (its syntax error
    reported, exit 2). The cache keeps the two runs apart, both ways: the
    output is the one `--no-cache` gives."""
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "viewer.py").write_text("import numpy as np\n\ndef show(frame):\n    if ((frame:\n")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for target, code in (("proj", 0), ("proj/viewer.py", 2), ("proj", 0), ("proj/viewer.py", 2)):
        for flags in ([], ["--no-cache"]):
            result = runner.invoke(app, ["check", *flags, target])
            assert result.exit_code == code, (target, flags, result.output)
