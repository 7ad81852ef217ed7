"""The real-world benchmark's scoring (benchmarks/realworld.py) on a tiny corpus.

The benchmark is the measure tfrewrite's precision and recall are judged by,
so its scoring must not break silently: labels with spans and optional codes,
clean functions, findings outside the sample, and module-level code.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


realworld = _load("realworld")
realworld_corpus = _load("realworld_corpus")

STEP = """\
import numpy as np
import tensorflow as tf


@tf.function
def noisy(x):
    if x > 0:
        x = x + 1
    return x + np.random.normal()


@tf.function
def clean(x):
    return tf.nn.relu(x)


def helper(x):
    print(x)
"""

LOOP = """\
import tensorflow as tf

for x in data:
    with tf.GradientTape() as tape:
        loss = model(x)
"""

LABELS = """\
# a comment
file\tline\tcode\tnote
a/step.py\t7\tTFR101\tif on a tensor
a/step.py\t9-9\tTFR102\tnp.random in traced code
a/step.py\t9\tTFR104?\toptional
a/step.py\tclean\tclean\tno hazard
b/loop.py\t4\tTFR303\tinline tape
b/loop.py\t5\tNEW:thing\tno rule yet
"""


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "step.py").write_text(STEP)
    (tmp_path / "b" / "loop.py").write_text(LOOP)
    return tmp_path


def _score(corpus: Path, hits: list) -> object:
    labels = realworld.parse_labels(LABELS)
    sources = realworld.load_sources(corpus, [lab.file for lab in labels])
    return realworld.score(labels, hits, sources)


def test_parse_labels_reads_spans_optional_and_clean_rows() -> None:
    labels = realworld.parse_labels(LABELS)
    assert [(lab.first, lab.last, lab.code) for lab in labels[:3]] == [
        (7, 7, "TFR101"),
        (9, 9, "TFR102"),
        (9, 9, "TFR104?"),
    ]
    assert labels[2].optional and labels[2].rule == "TFR104"
    assert labels[3].is_clean and labels[3].function == "clean"


def test_parse_labels_rejects_a_hazard_without_a_line() -> None:
    with pytest.raises(ValueError, match="needs a line"):
        realworld.parse_labels("x.py\tnoisy\tTFR101\twhy\n")


def test_function_spans_include_decorators_and_qualnames() -> None:
    spans = realworld.function_spans(
        "class A:\n    @d\n    def f(self):\n        def g():\n            pass\n"
    )
    assert [(s.qualname, s.first, s.def_line) for s in spans] == [("A.f", 2, 3), ("A.f.g", 4, 4)]
    assert realworld.innermost(spans, 5) == "A.f.g"
    assert realworld.innermost(spans, 1) == "<module>"


def test_score_counts_tp_fn_fp_per_rule(corpus: Path) -> None:
    Hit = realworld.Hit
    result = _score(
        corpus,
        [
            Hit("a/step.py", 7, "TFR101"),  # TP
            Hit("a/step.py", 9, "TFR104"),  # optional label: neither TP nor FP
            Hit("a/step.py", 14, "TFR101"),  # inside the clean function: FP
            Hit("a/step.py", 18, "TFR103"),  # helper is not sampled: ignored
            Hit("b/loop.py", 4, "TFR303"),  # module-level TP
            Hit("b/loop.py", 5, "TFR304"),  # module scope is sampled: FP
        ],
    )
    assert result.problems == []
    assert result.sampled_functions == 3  # noisy, clean, <module> of loop.py
    assert result.clean_functions == 1
    scores = {code: (s.labels, s.tp, s.fn, s.fp) for code, s in result.per_rule.items()}
    assert scores == {
        "TFR101": (1, 1, 0, 1),
        "TFR102": (1, 0, 1, 0),
        "TFR303": (1, 1, 0, 0),
        "TFR304": (0, 0, 0, 1),
        "NEW:thing": (1, 0, 1, 0),
    }
    assert result.per_rule["TFR101"].precision == 0.5
    assert result.per_rule["TFR102"].recall == 0.0
    table = "\n".join(realworld.score_table(result))
    assert "NEW:thing" in table
    assert table.splitlines()[-1].split()[3:7] == ["3", "2", "1", "2"]


def test_score_reports_labels_that_do_not_fit_the_code(corpus: Path) -> None:
    labels = realworld.parse_labels("a/step.py\tmissing\tclean\t\nc/none.py\t1\tTFR101\t\n")
    sources = realworld.load_sources(corpus, ["a/step.py", "c/none.py"])
    result = realworld.score(labels, [], sources)
    assert result.problems == ["a/step.py: no function 'missing'", "c/none.py: not in the corpus"]


def test_check_runs_the_engine_without_tensorflow(corpus: Path) -> None:
    tensorflow_was_loaded = "tensorflow" in sys.modules
    result, _seconds = realworld.check(corpus, jobs=1)
    hits = realworld.to_hits(result, corpus)
    assert realworld.Hit("a/step.py", 9, "TFR102") in hits
    assert tensorflow_was_loaded or "tensorflow" not in sys.modules
    assert realworld.failures(result, corpus) == {"internal": [], "syntax": []}


def test_corpus_keys_and_rows(tmp_path: Path) -> None:
    tsv = tmp_path / "c.tsv"
    tsv.write_text("# how to build\nrepo\tcommit\tpath\nowner/name\tabc\tsrc/x y.py\n")
    (entry,) = realworld_corpus.read_corpus(tsv)
    assert entry.key == "owner__name/src/x y.py"
    assert realworld_corpus.git_dir(tmp_path, "owner/name") == tmp_path / "owner+name" / "repo"
