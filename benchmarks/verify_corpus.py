"""How far `tfrewrite verify` reaches on real code: the corpus files inside their full repositories.

The real-world corpus (`realworld_corpus.tsv`) lists single files, but a file
verified alone cannot import its own package (`from tensorflow_addons.utils
import ...`), its sibling modules (`from core.yolov3 import ...`) or relative
ones (`from .utils import ...`). This benchmark extracts every listed
repository *whole* (its `.py` files) at the pinned commit from the bare git
mirrors, runs `tfrewrite verify` over the listed files (the pending safe
rewrites, plus the divergence checks of traced functions left alone), and
prints the outcome table:

    verdict        all   safe rewrites
    equivalent     ...
    consistent     ...
    mismatch       ...
    diverges       ...
    not proven     ...
    needs package  ...
    error          ...

followed by every error, needs-package and not-proven result of a safe rewrite
with its cause (the last line of its message), and the causes of the others
grouped and counted. `--json OUT` writes the raw verify results.

Packages a repository needs that the workers' interpreter lacks give
"needs package"; put them on the workers' path (`PYTHONPATH=DIR`, e.g. after
`pip install --target DIR typeguard`) or use `--python`. The workers import
tfrewrite from this checkout's `src` (put on their `PYTHONPATH`), so a
`--python` interpreter needs TensorFlow and the project's packages only.

Two environments cover the corpus's safe rewrites, Keras 3 code and Keras 2
code (TF-GAN needs `tf.estimator`, which TensorFlow 2.16 removed):

    # TensorFlow 2.21 / Keras 3 (the project's venv) plus the packages the code imports
    pip install --target /tmp/tg typeguard matplotlib pillow \
        'tensorflow-probability==0.25.*' 'tf-keras==2.21.*'
    PYTHONPATH=$PWD/src:/tmp/tg python benchmarks/verify_corpus.py
    # TensorFlow 2.15 / Keras 2 (not with /tmp/tg on PYTHONPATH: it holds TF 2.21)
    python3.11 -m venv /tmp/tf215 && /tmp/tf215/bin/pip install tensorflow-cpu==2.15.1 \
        'tensorflow-probability==0.23.*' tensorflow-gan matplotlib typeguard
    PYTHONPATH=$PWD/src python benchmarks/verify_corpus.py --python /tmp/tf215/bin/python

Measured (20 safe rewrites; 2 jobs; about 150-180 s each on an idle machine):

    environment        equivalent  not proven  needs package  error  mismatch
    TF 2.21 + /tmp/tg          17           1              2      0         0
    TF 2.15 venv               18           2              0      0         0
    either                     20           0              0      0         0

Under TF 2.21 a Keras-2 tutorial (`mnist_matmul`, `add_variable` without
`initializer`) is not proven and says to run the workers under Keras 2, and
TF-GAN's two ESRGAN loops need `tf.estimator`; under TF 2.15 those three pass
but two loops of a Keras 3 guide fail on Keras 2 (`optimizer.apply`).
ESRGAN's second phase loads the generator its first phase saved and builds an
ImageNet VGG19: `HARNESSES` gives it a harness
(`verify_harnesses/esrgan_harness.py`, what a user of that project would
write) and verify builds the VGG19 with seeded stand-in weights, the same on
both sides. The first ESRGAN loop (256 x 256 images, from the project's own
test) takes about 130 s on two shared cores, hence the default `--timeout 300`.

The blind sets, as a new user would run verify on them (every fix
`fix --unsafe-fixes` makes, nothing added by hand), and the coverage line
counted by fix:

    PYTHONPATH=$PWD/src python benchmarks/verify_corpus.py --unsafe-fixes \
        --tsv benchmarks/blind5_corpus.tsv --tsv benchmarks/blind6_corpus.tsv \
        --tsv benchmarks/blind7_corpus.tsv

Usage: python benchmarks/verify_corpus.py [--mirrors DIR] [--keep DIR] [--jobs N]
       [--timeout S] [--json OUT] [--python PY] [--repo OWNER/NAME ...]
       [--tsv FILE ...] [--unsafe-fixes]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from realworld_corpus import DEFAULT_MIRRORS, CorpusEntry, git_dir, read_corpus  # noqa: E402

from tfrewrite.verify.tally import coverage_line  # noqa: E402

VERDICTS = (
    "equivalent",
    "consistent",
    "mismatch",
    "diverges",
    "not proven",
    "needs package",
    "error",
)
# Harnesses a user of the project would write (`benchmarks/verify_harnesses/`,
# copied to the top of the extracted repository) for loops whose arguments
# only an earlier run of the project builds: repo -> {loop function: builder}.
HARNESSES = {
    "tensorflow/gan": {"esrgan.train_lib:train_esrgan": "esrgan_harness:build"},
}
# Only these files of a repository are extracted: the code, and what makes
# a folder a package or a project.
KEEP_SUFFIXES = (".py",)


def extract(entry: CorpusEntry, mirrors: Path, dest: Path) -> Path:
    """Write the `.py` files of `entry.repo` at `entry.commit` under
    `dest/<owner>__<name>/`; returns that folder. Blobs the mirror lacks
    (large files left out of a partial clone) are skipped."""
    root = dest / entry.key.split("/", 1)[0]
    if root.is_dir():
        return root
    git = ["git", "--git-dir", str(git_dir(mirrors, entry.repo))]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-z", entry.commit], capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    paths: dict[str, list[str]] = {}  # blob id -> the paths that hold it
    for item in filter(None, listing.split("\0")):
        meta, _, path = item.partition("\t")
        _mode, kind, blob = meta.split()
        if kind == "blob" and path.endswith(KEEP_SUFFIXES):
            paths.setdefault(blob, []).append(path)
    batch = subprocess.run(
        [*git, "cat-file", "--batch"],
        input="".join(f"{blob}\n" for blob in paths).encode(),
        capture_output=True,
        check=True,
    ).stdout
    offset = 0
    while offset < len(batch):
        header_end = batch.index(b"\n", offset)
        header = batch[offset:header_end].decode().split()
        offset = header_end + 1
        if len(header) < 3:  # "<id> missing"
            continue
        blob, size = header[0], int(header[2])
        content = batch[offset : offset + size]
        offset += size + 1
        for path in paths.get(blob, ()):
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
    return root


def cause(result: dict) -> str:
    """One line that says why a result is not a pass."""
    if result.get("verdict") == "needs package":
        text = result.get("needs_package") or ""
    else:
        text = result.get("error") or result.get("needs_package") or ""
    if not text:
        failed = [c for c in result.get("checks") or [] if not c.get("ok")]
        if failed:
            text = f"{failed[0]['name']}: {failed[0]['detail']}"
    if not text:
        text = "; ".join(result.get("warnings") or [])
    if not text and result.get("divergences"):
        text = result["divergences"][0]
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


def table(results: list[dict]) -> str:
    """Verdict counts over every result and over the rewrites (not the divergence checks)."""
    every = Counter(r["verdict"] for r in results)
    rewrites = Counter(r["verdict"] for r in results if r.get("mode") == "rewrite")
    lines = [f"{'verdict':<14} {'all':>5} {'rewrites':>14}"]
    for verdict in VERDICTS:
        lines.append(f"{verdict:<14} {every[verdict]:>5} {rewrites[verdict]:>14}")
    lines.append(f"{'total':<14} {sum(every.values()):>5} {sum(rewrites.values()):>14}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--keep", type=Path, help="extract here and keep it (default: a temp dir)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--python", help="interpreter for the verification workers")
    parser.add_argument("--json", type=Path, help="write the raw verify results here")
    parser.add_argument("--repo", action="append", help="only this repository (repeatable)")
    parser.add_argument(
        "--tsv",
        type=Path,
        action="append",
        help="corpus file(s) to read instead of realworld_corpus.tsv (repeatable: the blind sets)",
    )
    parser.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="verify what `fix --unsafe-fixes` would do, not the safe fixes only",
    )
    args = parser.parse_args()

    corpus = [e for tsv in args.tsv for e in read_corpus(tsv)] if args.tsv else read_corpus()
    entries = [e for e in corpus if not args.repo or e.repo in args.repo]
    with tempfile.TemporaryDirectory(prefix="tfrewrite-verify-corpus-") as tmp:
        dest = args.keep or Path(tmp)
        dest.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        missing = []
        files = []
        for entry in entries:
            if not git_dir(args.mirrors, entry.repo).is_dir():
                missing.append(entry.repo)
                continue
            root = extract(entry, args.mirrors, dest)
            files.append(str(root / entry.path))
            for builder in HARNESSES.get(entry.repo, {}).values():
                harness = f"{builder.partition(':')[0]}.py"
                (root / harness).write_bytes((HERE / "verify_harnesses" / harness).read_bytes())
        for repo in sorted(set(missing)):
            print(f"no mirror for {repo}", file=sys.stderr)
        # The harnesses alone: no repository's own pyproject.toml applies.
        config = dest / "pyproject.toml"
        harnesses = "".join(
            f'harness."{function}" = "{builder}"\n'
            for repo in sorted({e.repo for e in entries})
            for function, builder in HARNESSES.get(repo, {}).items()
        )
        config.write_text(f"[tool.tfrewrite.verify]\n{harnesses}", encoding="utf-8")
        print(
            f"extracted {len({e.repo for e in entries}) - len(set(missing))} repositories "
            f"in {time.perf_counter() - started:.1f} s; verifying {len(files)} files",
            file=sys.stderr,
        )
        command = [
            sys.executable,
            "-m",
            "tfrewrite",
            "verify",
            "--output-format",
            "json",
            "--jobs",
            str(args.jobs),
            "--timeout",
            str(args.timeout),
            "--config",
            str(config),
            *(["--unsafe-fixes"] if args.unsafe_fixes else []),
            *(["--python", args.python] if args.python else []),
            *files,
        ]
        started = time.perf_counter()
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=dest, env=dict(os.environ)
        )
        seconds = time.perf_counter() - started
        try:
            output = json.loads(done.stdout)
            results, coverage = output["results"], output["coverage"]
        except (json.JSONDecodeError, KeyError):
            print(done.stdout[-3000:], done.stderr[-3000:], sep="\n", file=sys.stderr)
            return 2
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    prefix = str(dest) + os.sep
    print(f"tfrewrite verify over {len(files)} corpus files in full trees: {seconds:.0f} s\n")
    print(table(results))
    print(f"\n{coverage_line(coverage)}")
    print("\nrewrites not proven equivalent, by cause:")
    for r in results:
        if r.get("mode") == "rewrite" and r["verdict"] != "equivalent":
            where = f"{r['path'].replace(prefix, '')}:{r['line']} {r['function']}"
            print(f"  {r['verdict'].upper():<13} {where}\n      {cause(r)[:220]}")
    print("\nother results that are not a pass, by cause:")
    causes = Counter(
        (r["verdict"], cause(r)[:140])
        for r in results
        if r.get("mode") != "rewrite" and r["verdict"] not in ("equivalent", "consistent")
    )
    for (verdict, text), count in sorted(causes.items(), key=lambda kv: (kv[0][0], -kv[1])):
        print(f"  {count:>3} {verdict:<13} {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
