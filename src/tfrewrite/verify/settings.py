"""`[tool.tfrewrite.verify]`: tolerances, budgets and per-function inputs.

```toml
[tool.tfrewrite.verify]
rtol = 1e-5            # relative tolerance (float32 noise)
atol = 1e-6            # absolute tolerance
samples = 1000         # calls per side for the distribution tests of random functions
search = 64            # candidate inputs tried to cover every tf.cond branch
timeout = 120          # seconds per function
harness."train:train_step" = "verify_harness:build"  # builds model, optimizer, batches
xla = true             # also try jit_compile=True
python = ".venv/bin/python"   # interpreter for the workers
keras = "auto"         # or 2 (tf_keras), 3: the Keras the code runs on; auto: as written
inputs."losses:dice" = {y_true = "float32[8,16,16,1] in [0,1]", y_pred = "float32[8,16,16,1]"}
```

Unknown keys and malformed specifications are configuration errors (exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from tfrewrite.config import ConfigError, Settings
from tfrewrite.verify.inputs import Spec, SpecError, parse_spec

_NUMBERS = {"rtol": float, "atol": float, "samples": int, "search": int, "timeout": float}
_KEYS = {*_NUMBERS, "inputs", "xla", "python", "harness", "keras"}
# `keras`: which Keras runs the project's code (see `legacy_keras`).
_KERAS = ("auto", 2, 3)


@dataclass(frozen=True)
class VerifySettings:
    rtol: float = 1e-5
    atol: float = 1e-6
    samples: int = 1000
    search: int = 64
    timeout: float = 120.0
    xla: bool = True
    python: str | None = None
    keras: str | int = "auto"
    # (module, qualname) -> parameter -> specification
    inputs: dict[tuple[str, str], dict[str, Spec]] = field(default_factory=dict)
    # (module, train step) -> "module:build"
    harness: dict[tuple[str, str], str] = field(default_factory=dict)
    # `tool.tfrewrite.print-output-stream`: where TFR103's `tf.print` of a
    # `print` without `file=` writes. "stderr" moves such output on purpose.
    print_output_stream: str = "stdout"

    def worker_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "rtol": self.rtol,
            "atol": self.atol,
            "samples": self.samples,
            "search": self.search,
            "xla": self.xla,
            # A caller that trains before its call is cut off well before
            # the worker's own timeout kills the whole verification.
            "caller_seconds": min(30.0, self.timeout / 4),
        }
        if self.keras != "auto":  # the default keeps stored results' keys
            options["keras"] = self.keras
        if self.print_output_stream != "stdout":  # the default keeps stored results' keys
            options["print_output_stream"] = self.print_output_stream
        return options

    def harness_for(self, module: str, qualname: str) -> str | None:
        """The harness builder configured for a train step, if any."""
        return _lookup(self.harness, module, qualname)

    def inputs_for(self, module: str, qualname: str) -> dict[str, Spec] | None:
        """Configured inputs for a function; the module may be given by its
        full dotted name or any dotted suffix of it (`losses` for `pkg.losses`)."""
        return _lookup(self.inputs, module, qualname)


def _lookup(table: Mapping[tuple[str, str], Any], module: str, qualname: str) -> Any:
    for (key_module, key_function), value in table.items():
        if key_function != qualname:
            continue
        if key_module == module or module.endswith("." + key_module) or not key_module:
            return value
    return None


def verify_settings_of(settings: Settings) -> VerifySettings:
    """`[tool.tfrewrite.verify]` of `settings`, with what verification reads
    from the rest of the configuration: where the project asks prints to go."""
    return replace(
        parse_verify_settings(settings.verify),
        print_output_stream=settings.print_output_stream,
    )


def parse_verify_settings(
    table: Mapping[str, Any], where: str = "tool.tfrewrite.verify"
) -> VerifySettings:
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(
            f"unknown key `{where}.{unknown[0]}` (known keys: {', '.join(sorted(_KEYS))})"
        )
    kwargs: dict[str, Any] = {}
    for key, kind in _NUMBERS.items():
        if key in table:
            value = table[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"`{where}.{key}` must be a non-negative number")
            kwargs[key] = kind(value)
    if "xla" in table:
        if not isinstance(table["xla"], bool):
            raise ConfigError(f"`{where}.xla` must be true or false")
        kwargs["xla"] = table["xla"]
    if "python" in table:
        if not isinstance(table["python"], str):
            raise ConfigError(f"`{where}.python` must be a path")
        kwargs["python"] = table["python"]
    if "keras" in table:
        if isinstance(table["keras"], bool) or table["keras"] not in _KERAS:
            raise ConfigError(f'`{where}.keras` must be "auto", 2 or 3')
        kwargs["keras"] = table["keras"]
    inputs: dict[tuple[str, str], dict[str, Spec]] = {}
    for key, params in (table.get("inputs") or {}).items():
        module, sep, function = key.rpartition(":")
        if not sep or not function:
            raise ConfigError(f'`{where}.inputs` key {key!r} must look like "module:function"')
        if not isinstance(params, dict):
            raise ConfigError(
                f'`{where}.inputs."{key}"` must be a table of parameter = specification'
            )
        try:
            inputs[(module, function)] = {name: parse_spec(value) for name, value in params.items()}
        except SpecError as err:
            raise ConfigError(f'`{where}.inputs."{key}"`: {err}') from err
    kwargs["inputs"] = inputs
    harness: dict[tuple[str, str], str] = {}
    for key, builder in (table.get("harness") or {}).items():
        module, sep, function = key.rpartition(":")
        if not sep or not function or not isinstance(builder, str) or ":" not in builder:
            raise ConfigError(
                f'`{where}.harness` entries must look like "module:train_step" = "module:build"'
            )
        harness[(module, function)] = builder
    kwargs["harness"] = harness
    return VerifySettings(**kwargs)
