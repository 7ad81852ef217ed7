"""Real-world benchmark: tfrewrite over public TF2 code, scored against hand labels.

The corpus is built by `realworld_corpus.py` from `realworld_corpus.tsv`
(public TF2 repositories pinned to commits). `realworld_labels.tsv` holds hand
labels for a sample of whole functions: one row per hazard a careful reader
sees (file key, line or `first-last` span, expected rule code, why) and one row
per clean function (file key, qualname or def line, `clean`).

Scoring, per rule, on the sampled functions only:

- TP: a labelled hazard with a finding of the same code whose first line lies
  in the label's line span;
- FN: a labelled hazard with no such finding (labels whose code starts with
  `NEW:` name hazards no rule covers yet: always FN, listed apart);
- FP: a finding inside a sampled function (the innermost function around the
  finding is a function that has a label) that matches no label.

A hazard labelled from a line holding only a comment (a commented-out
`# @tf.function`) starts at the code line after it.

A label whose code ends in `?` is optional: a finding on it is neither TP nor
FP, and its absence is no FN (used where a finding is defensible but not
required, e.g. TFR304 on a model with no dropout or batch normalization).
Findings outside any function belong to the scope `<module>`.

Also printed: files, lines, time, findings per rule over the whole corpus,
files tfrewrite failed on, and with `--fix` the safe and unsafe fix passes on a
temporary copy (results that do not parse, and whether a second `fix` changes
anything). `--json` prints everything as one JSON document for diffing runs.

Usage: python benchmarks/realworld.py CORPUS_DIR [--labels PATH] [--fix] [--json] [--jobs N]

`--labels` scores against another labels file of the same format (default
`realworld_labels.tsv`), e.g. `benchmarks/blind_labels.tsv` over the corpus built from
`blind_corpus.tsv`.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, RunResult, run
from tfrewrite.rules import select_rules

HERE = Path(__file__).parent
LABELS_TSV = HERE / "realworld_labels.tsv"
MODULE_SCOPE = "<module>"
CLEAN = "clean"


# -- labels -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Label:
    """One hand label: a hazard on `first..last` lines, or a clean function."""

    file: str
    first: int
    last: int
    code: str  # a rule code, `NEW:<name>`, or `clean`; a trailing `?` marks it optional
    note: str = ""
    function: str = ""  # for `clean` rows given by qualname

    @property
    def optional(self) -> bool:
        return self.code.endswith("?")

    @property
    def rule(self) -> str:
        return self.code.rstrip("?")

    @property
    def is_clean(self) -> bool:
        return self.code == CLEAN


# Hazards labelled `NEW:` that a rule now reports, scored as that rule. The
# labels stay as written blind; the first score of a set, before the rule
# covered them, counted them as `NEW:`.
COVERED_BY_RULES = {
    # `except tf.errors.*` around ops in traced code, which never catches
    # (TFR207 since blind set 203; a bare `except` stays unreported).
    "NEW:try-except-in-traced-code": "TFR207",
    # A held layer a model's step reaches through a method of its own,
    # without a call context, given no `training` (TFR304 since blind set 16).
    "NEW:call-drops-training": "TFR304",
    # `and`/`or`/`not` testing a tensor outside an `if` (TFR109 since blind set 21).
    "NEW:tensor-bool-op": "TFR109",
    # `compile(run_eagerly=True)` left on (TFR307 since blind set 22).
    "NEW:compile-run-eagerly": "TFR307",
    # `@tf.function` on a Keras 3 layer's `call` (or what it calls) building
    # its sublayers' weights (TFR308 since blind set 33).
    "NEW:tf-function-on-layer-call-freezes-lazy-weights": "TFR308",
    "NEW:decorated-call-builds-weights": "TFR308",
    "NEW:tf-function-on-model-call": "TFR308",
    # Python state read in traced code, frozen at the first trace: TFR201's
    # hazard under another name (blind set 41).
    "NEW:python-attribute-frozen-at-trace": "TFR201",
    # The same for a `self` attribute (blind sets 46, 52, 60).
    "NEW:self-attribute-frozen": "TFR201",
    # A `while` on a tensor, which TFR101 reports (it covers `if`, `while`
    # and conditional expressions; blind sets 104, 109).
    "NEW:tensor-while-condition": "TFR101",
    # `len()` of a tensor in traced code, which only AutoGraph converts
    # (TFR105 since blind set 118).
    "NEW:len-on-tensor": "TFR105",
    # The same, under another name (blind set 187).
    "NEW:len-of-symbolic-tensor": "TFR105",
    # Python's clocks read in traced code, read once per trace (TFR202 since
    # blind set 190).
    "NEW:python-clock-in-traced-code": "TFR202",
    # A tensor given as `training` to a Keras 3 layer, which tests it in
    # Python (TFR110 since blind set 122; labelled in sets 2, 50, 116, 118).
    "NEW:tensor-training-flag-to-keras-layer": "TFR110",
    # A Python list appended to in a loop AutoGraph runs as a
    # `tf.while_loop` (`for i in tf.range(n)`), which TFR202 reports
    # (`InaccessibleTensorError`; labelled so in blind set 225).
    "NEW:python-list-append-in-tensor-loop": "TFR202",
}


def parse_labels(text: str) -> list[Label]:
    """Rows of `file<TAB>line<TAB>code<TAB>note`; `#` lines and the header are skipped.

    `line` is a line number, a `first-last` span, or (for `clean` rows) a
    function's qualname such as `Agent.train`."""
    labels: list[Label] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        cells = raw.split("\t")
        if cells[0] == "file":
            continue
        if len(cells) < 3:
            raise ValueError(f"labels line {number}: expected file, line, code, note: {raw!r}")
        file, where, code = cells[0], cells[1].strip(), cells[2].strip()
        optional = "?" if code.endswith("?") else ""
        code = COVERED_BY_RULES.get(code.rstrip("?"), code.rstrip("?")) + optional
        note = cells[3].strip() if len(cells) > 3 else ""
        first, _, last = where.partition("-")
        if first.isdigit() and (not last or last.isdigit()):
            labels.append(Label(file, int(first), int(last or first), code, note))
        elif code == CLEAN:
            labels.append(Label(file, 0, 0, code, note, function=where))
        else:
            raise ValueError(f"labels line {number}: a hazard needs a line or span: {raw!r}")
    return labels


# -- functions of a file ----------------------------------------------------------------


@dataclass(frozen=True)
class FunctionSpan:
    qualname: str
    def_line: int
    first: int  # first decorator line
    last: int


def function_spans(source: str) -> list[FunctionSpan]:
    """Every function and method in `source`, with its qualname (`Outer.inner`)."""
    spans: list[FunctionSpan] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                spans.append(FunctionSpan(name, child.lineno, first, child.end_lineno or first))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return spans  # a file that does not parse has no functions to score
    visit(tree, "")
    return spans


def innermost(spans: Sequence[FunctionSpan], line: int) -> str:
    """The qualname of the innermost function around `line`, or `<module>`."""
    best: FunctionSpan | None = None
    for span in spans:
        if span.first <= line <= span.last and (best is None or span.first >= best.first):
            best = span
    return best.qualname if best is not None else MODULE_SCOPE


def label_scope(label: Label, spans: Sequence[FunctionSpan]) -> str:
    """The function a label samples."""
    if label.is_clean and label.function:
        names = {s.qualname for s in spans}
        if label.function not in names:
            raise ValueError(f"{label.file}: no function {label.function!r}")
        return label.function
    if label.is_clean:
        for span in spans:
            if span.def_line == label.first or span.first == label.first:
                return span.qualname
        raise ValueError(f"{label.file}:{label.first}: no function defined on that line")
    return innermost(spans, label.first)


# -- scoring ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """A finding reduced to what scoring needs."""

    file: str
    line: int
    code: str


@dataclass
class RuleScore:
    labels: int = 0
    tp: int = 0
    fn: int = 0
    fp: int = 0

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / self.labels if self.labels else None


@dataclass
class Score:
    per_rule: dict[str, RuleScore] = field(default_factory=dict)
    missed: list[tuple[Label, str]] = field(default_factory=list)  # (label, scope)
    false_positives: list[tuple[Hit, str]] = field(default_factory=list)
    sampled_functions: int = 0
    clean_functions: int = 0
    problems: list[str] = field(default_factory=list)  # label rows that do not fit the code

    def rule(self, code: str) -> RuleScore:
        return self.per_rule.setdefault(code, RuleScore())


def score(labels: Iterable[Label], hits: Iterable[Hit], sources: dict[str, str]) -> Score:
    """Score `hits` (findings) against `labels` on the functions the labels sample.

    `sources` maps each labelled file key to its text (to find functions)."""
    result = Score()
    spans = {key: function_spans(text) for key, text in sources.items()}
    sampled: dict[tuple[str, str], list[Label]] = {}
    clean: set[tuple[str, str]] = set()
    for label in labels:
        label = _on_code(label, sources.get(label.file))
        if label.file not in spans:
            result.problems.append(f"{label.file}: not in the corpus")
            continue
        try:
            scope = label_scope(label, spans[label.file])
        except ValueError as err:
            result.problems.append(str(err))
            continue
        sampled.setdefault((label.file, scope), []).append(label)
        if label.is_clean:
            clean.add((label.file, scope))
    for key in sorted(clean):
        if any(not lab.is_clean for lab in sampled[key]):
            result.problems.append(f"{key[0]}: {key[1]} is labelled clean and has hazards")
    result.sampled_functions = len(sampled)
    result.clean_functions = len(clean)

    hits_by_scope: dict[tuple[str, str], list[Hit]] = {}
    for hit in hits:
        if hit.file in spans:
            scope = innermost(spans[hit.file], hit.line)
            if (hit.file, scope) in sampled:
                hits_by_scope.setdefault((hit.file, scope), []).append(hit)

    for key, scope_labels in sampled.items():
        scope_hits = hits_by_scope.get(key, [])
        hazards = [lab for lab in scope_labels if not lab.is_clean]
        for label in hazards:
            if label.optional:
                continue
            stats = result.rule(label.rule)
            stats.labels += 1
            if any(_matches(hit, label) for hit in scope_hits):
                stats.tp += 1
            else:
                stats.fn += 1
                result.missed.append((label, key[1]))
        for hit in scope_hits:
            if not any(_matches(hit, label) for label in hazards):
                result.rule(hit.code).fp += 1
                result.false_positives.append((hit, key[1]))
    return result


def _on_code(label: Label, text: str | None) -> Label:
    """A hazard labelled from a line holding only a comment (a commented-out
    `# @tf.function` above the step it would decorate) starts at the code
    line after it."""
    if text is None or label.is_clean:
        return label
    lines = text.splitlines()
    line = label.first
    if not (0 < line <= len(lines)) or not lines[line - 1].strip().startswith("#"):
        return label
    while line <= len(lines) and (
        not lines[line - 1].strip() or lines[line - 1].strip().startswith("#")
    ):
        line += 1
    if line > len(lines):
        return label
    return dataclasses.replace(label, first=line, last=max(line, label.last))


def _matches(hit: Hit, label: Label) -> bool:
    return hit.code == label.rule and label.first <= hit.line <= label.last


# -- running tfrewrite --------------------------------------------------------------------


ALL_CODES = tuple(r.code for r in select_rules(["TFR"], []))


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*.py") if p.is_file())


def repositories(corpus: Path) -> dict[Path, list[Path]]:
    """The corpus's files by repository (its top-level folders: `owner__name`)."""
    found: dict[Path, list[Path]] = {}
    for path in corpus_files(corpus):
        top = corpus / path.relative_to(corpus).parts[0]
        found.setdefault(top if top.is_dir() else corpus, []).append(path)
    return found


def run_per_repository(corpus: Path, options: RunOptions, jobs: int) -> RunResult:
    """`run` once per repository with the repository as its root, as a user
    runs `tfrewrite check .` in it: its modules are named from there (a
    script's `from utils import *` finds its sibling), and two repositories
    with a `utils` module never see each other's."""
    merged = RunResult()
    for root, files in repositories(corpus).items():
        each = dataclasses.replace(options, root=str(root))
        result = run([InputFile(str(p)) for p in files], each, jobs=jobs)
        merged.files.extend(result.files)
        merged.indexed += result.indexed
        merged.parsed += result.parsed
        merged.cached += result.cached
        merged.unchecked.extend(result.unchecked)
    return merged


def check(corpus: Path, jobs: int) -> tuple[RunResult, float]:
    options = RunOptions(rule_codes=ALL_CODES, root=str(corpus))
    start = time.perf_counter()
    result = run_per_repository(corpus, options, jobs)
    return result, time.perf_counter() - start


def to_hits(result: RunResult, corpus: Path) -> list[Hit]:
    return [
        Hit(Path(f.path).relative_to(corpus).as_posix(), f.start.line, f.code)
        for f in result.findings
    ]


def failures(result: RunResult, corpus: Path) -> dict[str, list[str]]:
    """Files tfrewrite failed on: internal errors (crashes) apart from syntax errors."""
    out: dict[str, list[str]] = {"internal": [], "syntax": []}
    for error in result.errors:
        rel = Path(error.path).relative_to(corpus).as_posix()
        kind = "syntax" if error.message.startswith("syntax error") else "internal"
        out[kind].append(f"{rel}: {error.message}")
    return out


def fix_pass(corpus: Path, unsafe: bool, jobs: int) -> dict[str, object]:
    """Fix a temporary copy of the corpus twice; report unparsable results,
    crashes and whether the second `fix` changed anything."""
    with tempfile.TemporaryDirectory(prefix="tfr-realworld-") as tmp:
        copy = Path(tmp) / "corpus"
        shutil.copytree(corpus, copy, ignore=shutil.ignore_patterns("*.md", "READY"))
        options = RunOptions(rule_codes=ALL_CODES, root=str(copy), fix=True, unsafe_fixes=unsafe)
        rounds = []
        for _ in range(2):
            start = time.perf_counter()
            result = run_per_repository(copy, options, jobs)
            elapsed = time.perf_counter() - start
            changed, unparsable = [], []
            for file in result.files:
                if not file.changed or file.fixed_source is None:
                    continue
                rel = Path(file.path).relative_to(copy).as_posix()
                changed.append(rel)
                try:
                    ast.parse(file.fixed_source)
                except SyntaxError as err:
                    unparsable.append(f"{rel}:{err.lineno}: {err.msg}")
                    continue
                Path(file.path).write_text(file.fixed_source, encoding="utf-8")
            rounds.append(
                {
                    "seconds": round(elapsed, 2),
                    "fixes": dict(Counter(f.code for f in result.fixes_applied)),
                    "changed_files": changed,
                    "unparsable": unparsable,
                    "internal_errors": failures(result, copy)["internal"],
                }
            )
    first, second = rounds
    return {
        "unsafe": unsafe,
        "first": first,
        "second_changes": second["changed_files"],
        "second_fixes": second["fixes"],
        "idempotent": not second["changed_files"],
    }


# -- report -----------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "   -  " if value is None else f"{100 * value:5.1f}%"


def score_table(result: Score) -> list[str]:
    """The precision/recall table, one row per code, then the total over rules."""
    rows = [f"{'rule':<28} {'labels':>6} {'TP':>4} {'FN':>4} {'FP':>4} {'prec':>7} {'recall':>7}"]
    total = RuleScore()
    for code in sorted(result.per_rule, key=lambda c: (c.startswith("NEW:"), c)):
        s = result.per_rule[code]
        rows.append(
            f"{code:<28} {s.labels:>6} {s.tp:>4} {s.fn:>4} {s.fp:>4} "
            f"{_pct(s.precision):>7} {_pct(s.recall):>7}"
        )
        if not code.startswith("NEW:"):
            for name in ("labels", "tp", "fn", "fp"):
                setattr(total, name, getattr(total, name) + getattr(s, name))
    rows.append(
        f"{'all TFR rules':<28} {total.labels:>6} {total.tp:>4} {total.fn:>4} {total.fp:>4} "
        f"{_pct(total.precision):>7} {_pct(total.recall):>7}"
    )
    return rows


def load_sources(corpus: Path, keys: Iterable[str]) -> dict[str, str]:
    out = {}
    for key in set(keys):
        path = corpus / key
        if path.is_file():
            out[key] = path.read_text(encoding="utf-8-sig", errors="replace")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--labels", type=Path, default=LABELS_TSV)
    parser.add_argument("--fix", action="store_true", help="also run the fix passes")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--details", action="store_true", help="list every FN and FP")
    args = parser.parse_args(argv)
    corpus: Path = args.corpus.resolve()

    paths = corpus_files(corpus)
    lines = sum(p.read_bytes().count(b"\n") for p in paths)
    result, seconds = check(corpus, args.jobs)
    hits = to_hits(result, corpus)
    labels = parse_labels(args.labels.read_text(encoding="utf-8"))
    scored = score(labels, hits, load_sources(corpus, [lab.file for lab in labels]))
    failed = failures(result, corpus)
    fixes = [fix_pass(corpus, unsafe, args.jobs) for unsafe in (False, True)] if args.fix else []

    label_counts = Counter(lab.code for lab in labels)
    report = {
        "corpus": str(corpus),
        "files": len(paths),
        "lines": lines,
        "seconds": round(seconds, 2),
        "findings_per_rule": dict(sorted(Counter(h.code for h in hits).items())),
        "labels": dict(sorted(label_counts.items())),
        "sampled_functions": scored.sampled_functions,
        "clean_functions": scored.clean_functions,
        "scores": {
            code: {**asdict(s), "precision": s.precision, "recall": s.recall}
            for code, s in sorted(scored.per_rule.items())
        },
        "missed": [
            f"{lab.file}:{lab.first} {lab.code} in {scope}: {lab.note}"
            for lab, scope in scored.missed
        ],
        "false_positives": [
            f"{h.file}:{h.line} {h.code} in {scope}" for h, scope in scored.false_positives
        ],
        "label_problems": scored.problems,
        "crashes": failed["internal"],
        "syntax_errors": failed["syntax"],
        "fix": fixes,
    }
    if args.json:
        json.dump(report, sys.stdout, indent=1, ensure_ascii=False)
        print()
        return 0

    print(f"corpus: {corpus}: {len(paths)} files, {lines} lines; check: {seconds:.1f} s")
    print("\nfindings per rule (whole corpus):")
    for code, count in report["findings_per_rule"].items():  # type: ignore[union-attr]
        print(f"  {code}  {count}")
    hazards = sum(n for c, n in label_counts.items() if c != CLEAN)
    print(
        f"\nlabelled sample: {hazards} hazard labels, {scored.clean_functions} clean functions, "
        f"{scored.sampled_functions} functions sampled"
    )
    print("\n".join(score_table(scored)))
    for problem in scored.problems:
        print(f"label problem: {problem}")
    if args.details:
        print("\nmissed (FN):")
        for line in report["missed"]:  # type: ignore[union-attr]
            print(f"  {line}")
        print("\nfalse positives (FP):")
        for line in report["false_positives"]:  # type: ignore[union-attr]
            print(f"  {line}")
    print(f"\ncrashes (internal errors): {len(failed['internal'])}")
    for line in failed["internal"]:
        print(f"  {line}")
    print(f"syntax errors: {len(failed['syntax'])}")
    for fix in fixes:
        first = fix["first"]
        kind = "fix --unsafe-fixes" if fix["unsafe"] else "fix"
        print(
            f"\n{kind}: {len(first['changed_files'])} files changed, "  # type: ignore[index]
            f"fixes {first['fixes']}, {first['seconds']} s"  # type: ignore[index]
        )
        print(f"  results that do not parse: {len(first['unparsable'])}")  # type: ignore[index]
        for line in first["unparsable"]:  # type: ignore[index]
            print(f"    {line}")
        for line in first["internal_errors"]:  # type: ignore[index]
            print(f"    internal error: {line}")
        print(
            f"  second {kind} changes {len(fix['second_changes'])} files "  # type: ignore[arg-type]
            f"({'idempotent' if fix['idempotent'] else 'NOT idempotent'})"
        )
        for line in fix["second_changes"]:  # type: ignore[union-attr]
            print(f"    {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
