"""TFR304 on a model whose sublayers come from a class its constructor is
handed (`Head(3, Plain)`, then `self.backbone = backbone(...)`) and from
layers a loop builds into a local name before appending it (`conv =
Conv2D(...)`, `self.outs.append(conv)`): the head is judged by what those
build, in any module. Convolutions only: `training=True` changes nothing,
no finding. A backbone class with dropout, or an appended `Dropout`: the
finding stays."""

from __future__ import annotations

from pathlib import Path

from tests.passed_layer_classes import project
from tests.projects import check_project, found_lines


def _found(tmp_path: Path, **kwargs: str) -> list[tuple[str, int]]:
    return found_lines(check_project(tmp_path, project(**kwargs), ("TFR304",)))


def test_a_head_of_convolutions_ignores_training(tmp_path: Path) -> None:
    assert _found(tmp_path) == []


def test_a_backbone_class_with_dropout_needs_training(tmp_path: Path) -> None:
    assert _found(tmp_path, backbone="Noisy") == [("trainer.py", 15)]


def test_an_appended_dropout_needs_training(tmp_path: Path) -> None:
    assert _found(tmp_path, out="Dropout(0.5)") == [("trainer.py", 15)]
