"""Build the real-world corpus from fetched git mirrors.

`realworld_corpus.tsv` lists public TF2 source files as (repo, commit, path).
Each repository must already be present as a bare git directory under the
mirror root (`<mirrors>/<owner>+<name>/repo` or `.../repo/.git`). This script
writes every listed file, read at its pinned commit, to
`CORPUS_DIR/<owner>__<name>/<path>`, so a benchmark run always sees the same
bytes whatever the mirrors' newest commit is.

Usage: python benchmarks/realworld_corpus.py CORPUS_DIR [--tsv PATH] [--mirrors DIR] [--ready]

`--tsv` reads another corpus list of the same format (default `realworld_corpus.tsv`),
e.g. `benchmarks/blind_corpus.tsv`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
CORPUS_TSV = HERE / "realworld_corpus.tsv"
DEFAULT_MIRRORS = Path("/work/.mirror")


@dataclass(frozen=True)
class CorpusEntry:
    """One pinned file of the corpus."""

    repo: str
    commit: str
    path: str

    @property
    def key(self) -> str:
        """The file's path inside the corpus directory (also the labels' file key)."""
        owner, name = self.repo.split("/", 1)
        return f"{owner}__{name}/{self.path}"


def read_corpus(tsv: Path = CORPUS_TSV) -> list[CorpusEntry]:
    """The corpus rows, skipping `#` comments and the header line."""
    entries: list[CorpusEntry] = []
    for line in tsv.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        repo, commit, path = line.split("\t")
        if repo == "repo":
            continue
        entries.append(CorpusEntry(repo, commit, path))
    return entries


def git_dir(mirrors: Path, repo: str) -> Path:
    """The bare git directory `fetch` made for `repo`."""
    base = mirrors / repo.replace("/", "+") / "repo"
    return base / ".git" if (base / ".git").is_dir() else base


def build(
    corpus_dir: Path, mirrors: Path = DEFAULT_MIRRORS, tsv: Path = CORPUS_TSV
) -> tuple[int, list[str]]:
    """Write every entry of `tsv` into `corpus_dir`; returns (written, problems)."""
    written = 0
    problems: list[str] = []
    for entry in read_corpus(tsv):
        source = git_dir(mirrors, entry.repo)
        if not source.is_dir():
            problems.append(f"{entry.repo}: no mirror at {source}")
            continue
        result = subprocess.run(
            ["git", "--git-dir", str(source), "show", f"{entry.commit}:{entry.path}"],
            capture_output=True,
        )
        if result.returncode != 0:
            problems.append(f"{entry.key}: {result.stderr.decode(errors='replace').strip()}")
            continue
        target = corpus_dir / entry.key
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(result.stdout)
        written += 1
    return written, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus_dir", type=Path)
    parser.add_argument("--tsv", type=Path, default=CORPUS_TSV, help="corpus list to build")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--ready", action="store_true", help="write CORPUS_DIR/READY when done")
    args = parser.parse_args()
    written, problems = build(args.corpus_dir, args.mirrors, args.tsv)
    for problem in problems:
        print(problem, file=sys.stderr)
    repos = len({entry.repo for entry in read_corpus(args.tsv)})
    print(f"wrote {written} files from {repos} repositories to {args.corpus_dir}")
    if args.ready and not problems:
        (args.corpus_dir / "READY").write_text(
            f"{written} files from {repos} repositories; see benchmarks/{args.tsv.name}\n"
        )
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
