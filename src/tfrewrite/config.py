"""`[tool.tfrewrite]` in the nearest `pyproject.toml`.

Invalid TOML, unknown keys, values of the wrong type and unknown rule codes
are errors (exit 2) that name the file, the key and the value, like Ruff's: a
typo in `per-file-ignores` must not silently select nothing.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    """A configuration problem, reported with exit code 2."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("TFR",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unsafe_fixes: bool = False
    # Where rewritten prints write: "stdout" (what `print` used) or "stderr".
    print_output_stream: str = "stdout"
    verify: dict[str, Any] = field(default_factory=dict)
    cache_dir: Path | None = None  # default: `.tfrewrite_cache` beside the settings
    source: Path | None = None  # the file the settings came from
    root: Path = field(default_factory=Path.cwd)


DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tfrewrite_cache",
)

_KEYS = {
    "select",
    "ignore",
    "exclude",
    "extend-exclude",
    "per-file-ignores",
    "unsafe-fixes",
    "print-output-stream",
    "verify",
    "cache-dir",
}


def find_config(start: Path) -> Path | None:
    """The nearest `pyproject.toml` with a `[tool.tfrewrite]` table, walking up."""
    current = start.resolve()
    if current.is_file():
        current = current.parent
    for folder in [current, *current.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except OSError:
                continue
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
                # The file that applies is broken: never fall back to defaults silently.
                raise ConfigError(f"{candidate}: invalid TOML: {err}") from err
            if "tfrewrite" in data.get("tool", {}):
                return candidate
    return None


def _show(value: Any) -> str:
    """A TOML value as the user wrote it, near enough to find it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_show(v)}" for k, v in value.items()) + "}"
    return str(value)


def _string_list(value: Any, key: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(
            f"{path}: `tool.tfrewrite.{key}` must be a list of strings, not {_show(value)}"
        )
    return tuple(value)


def _rule_codes(value: Any, key: str, path: Path) -> tuple[str, ...]:
    """A list of rule codes or prefixes, each of which must name a rule."""
    from tfrewrite.rules import UnknownRuleError, validate_selectors

    codes = tuple(code.strip().upper() for code in _string_list(value, key, path))
    for code in codes:
        try:
            validate_selectors([code])
        except UnknownRuleError as err:
            raise ConfigError(
                f'{path}: `tool.tfrewrite.{key}` names an unknown rule code "{code}" '
                "(see `tfrewrite rule --all`)"
            ) from err
    return codes


def default_root(paths: list[Path]) -> Path:
    """The project root when no configuration file names one: the current
    folder when every path lies inside it (the usual run, from the project),
    else the deepest folder holding every path, so that module names are
    those of the project being checked (`tfrewrite check ../other` from inside
    another project must not read `../other/test.py` as the module `test` of
    the current folder)."""
    cwd = Path.cwd().resolve()
    folders = []
    for path in paths:
        if str(path) == "-" or not os.path.exists(path):
            continue
        resolved = path.resolve()
        folders.append(resolved if resolved.is_dir() else resolved.parent)
    if not folders or all(folder == cwd or cwd in folder.parents for folder in folders):
        return cwd
    return Path(os.path.commonpath(folders))


def load_settings(path: Path | None, paths: list[Path] | None = None) -> Settings:
    """The settings of the configuration file `path`; without one, the
    defaults, rooted where the checked `paths` are (`default_root`)."""
    if path is None:
        return Settings(root=default_root(paths or []))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: invalid TOML: {err}") from err
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror}") from err
    table = data.get("tool", {}).get("tfrewrite", {}) if path.name == "pyproject.toml" else data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: `tool.tfrewrite` must be a table, not {_show(table)}")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key `tool.tfrewrite.{unknown[0]}` = {_show(table[unknown[0]])} "
            f"(known keys: {', '.join(sorted(_KEYS))})"
        )
    kwargs: dict[str, Any] = {"source": path, "root": path.parent.resolve()}
    if "select" in table:
        kwargs["select"] = _rule_codes(table["select"], "select", path)
    if "ignore" in table:
        kwargs["ignore"] = _rule_codes(table["ignore"], "ignore", path)
    if "exclude" in table:
        kwargs["exclude"] = _string_list(table["exclude"], "exclude", path)
    if "extend-exclude" in table:
        kwargs["extend_exclude"] = _string_list(table["extend-exclude"], "extend-exclude", path)
    if "per-file-ignores" in table:
        value = table["per-file-ignores"]
        if not isinstance(value, dict):
            raise ConfigError(
                f"{path}: `tool.tfrewrite.per-file-ignores` must be a table, not {_show(value)}"
            )
        kwargs["per_file_ignores"] = {
            pattern: _rule_codes(codes, f'per-file-ignores."{pattern}"', path)
            for pattern, codes in value.items()
        }
    if "unsafe-fixes" in table:
        if not isinstance(table["unsafe-fixes"], bool):
            raise ConfigError(
                f"{path}: `tool.tfrewrite.unsafe-fixes` must be true or false, "
                f"not {_show(table['unsafe-fixes'])}"
            )
        kwargs["unsafe_fixes"] = table["unsafe-fixes"]
    if "print-output-stream" in table:
        if table["print-output-stream"] not in ("stdout", "stderr"):
            raise ConfigError(
                f'{path}: `tool.tfrewrite.print-output-stream` must be "stdout" or "stderr", '
                f"not {_show(table['print-output-stream'])}"
            )
        kwargs["print_output_stream"] = table["print-output-stream"]
    if "cache-dir" in table:
        if not isinstance(table["cache-dir"], str):
            raise ConfigError(f"{path}: `tool.tfrewrite.cache-dir` must be a string (a folder)")
        kwargs["cache_dir"] = (path.parent / table["cache-dir"]).resolve()
    if "verify" in table:
        if not isinstance(table["verify"], dict):
            raise ConfigError(
                f"{path}: `tool.tfrewrite.verify` must be a table, not {_show(table['verify'])}"
            )
        kwargs["verify"] = table["verify"]
    return Settings(**kwargs)
