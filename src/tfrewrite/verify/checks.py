"""The verification checks, run inside a worker process (TensorFlow imported).

For one function, given the original module source and optionally its
rewrite:

* **equivalence** — the original run eagerly is the reference. The rewrite is
  run eagerly, traced, and traced with `autograph=False` (proof that it no
  longer needs AutoGraph), on every input of the proof set; values, shapes,
  dtypes and gradients with respect to float inputs must agree within
  `atol + rtol*|expected|`.
* **boundaries** — the proof set holds inputs on both sides of (and at)
  every constant a condition of the original or the rewrite compares with,
  and NaN, infinite and empty inputs where a branch tests for them (see
  `conditions`, `boundaries`, `proof_inputs`).
* **coverage** — every `tf.cond` the rewrite introduced must take both
  branches on some input of the proof set; inputs are searched (range ends,
  scaling, shifting, sign flips, fresh draws) until they do. Uncovered is
  "not proven".
* **randomness** — a function whose eager original returns different values on
  identical inputs is stochastic. Then values are not compared; instead two
  traced calls must differ (a frozen sample is the hazard), shapes and dtypes
  must match, and over `samples` calls the moments must agree: with per-call
  means m_i, |mean_o - mean_r| <= 5 * sqrt(var_o/n + var_r/n) + atol (a
  two-sample z-test at 5 standard errors), and the ratio of the standard
  deviations of all sampled values must lie in [0.75, 1.33].
* **printing** — when the eager original prints, every traced call (not only
  the first) must print the same numbers, to the same stream: standard
  output and standard error are captured apart, and a `print` (stdout)
  turned into a `tf.print` that writes to stderr is a mismatch.
* **divergence of the original** — the original traced against itself eager,
  and, for each module-level constant it reads, traced again after changing
  the constant (the flag frozen at trace time; see `flags`).
* **XLA** — `jit_compile=True`; failure to compile is a warning.
* **train steps** — with a configured harness (`harness.py`), k steps eagerly
  against k steps traced from the same initial weights; its batches must
  take both branches of every introduced `tf.cond`, as a replayed loop's must.
* **arguments from callers** — a function of objects (a model) is checked on
  the arguments the code that calls it builds (see `callers`, `caller_capture`).
"""

from __future__ import annotations

import ast
import dataclasses
import math
import random
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf

from tfrewrite.verify import (
    boundaries,
    caller_capture,
    callers,
    capture,
    conditions,
    coverage,
    datasets,
    flags,
    inputs,
    intent,
    loader,
    module_slice,
    pretrained,
    project_imports,
    proof_inputs,
    randomness,
    restored_gradients,
    signatures,
    stand_ins,
)
from tfrewrite.verify.compare import compare, describe, identical
from tfrewrite.verify.fix_kinds import (
    AUTOGRAPH_RULES,
    GRADIENT_RULES,
    PRINT_RULES,
    claims_any_of,
    claims_none_of,
)
from tfrewrite.verify.outcome import (
    SEED,
    Options,
    Outcome,
    call,
    decorator_options,
    eagerly,
    float_args,
    gradient_fn,
    has_float_output,
)
from tfrewrite.workspace.line_names import line_names

CHECK_EAGER = "rewrite eager"
CHECK_TRACED = "rewrite traced"
CHECK_NO_AUTOGRAPH = "rewrite traced, autograph=False"
CHECK_GRADIENTS = "gradients"
CHECK_ORIGINAL_TRACED = "original traced vs eager"
CHECK_ORIGINAL_PRINTS = "original prints every call"
CHECK_ORIGINAL_GLOBALS = "original reads module flags per call"
CHECK_PRINTS = "prints every call"
# Who printed, in the print checks' messages.
ORIGINAL_TRACED = "traced, the original"
REWRITE = "the rewrite"
CHECK_GLOBALS = "module values read per call"
REPEATS = 9
PROOF_REPEATS = 32  # inputs of the proof set called twice to find a random branch
# The most, relative, that tracing the original may move its own gradient
# by for that move to count as numeric noise.
_MAX_TRACING_NOISE = 1e-2


# --- the verification of one function ----------------------------------------


@dataclass
class Request:
    qualname: str
    original_source: str
    rewrite_source: str | None
    path: str = "<source>"
    package: str | None = None
    specs: dict[str, Any] = field(default_factory=dict)  # param -> spec JSON
    config_key: str | None = None  # "module:function", for messages
    harness: str | None = None  # "module:build" for a train step
    options: Options = field(default_factory=Options)
    # A training loop to replay: {"original": [scope, index], "rewrite": [scope, index],
    # "step": train step name or None}
    loop: dict[str, Any] | None = None
    factory: str | None = None  # "module:function" that builds `self` for a method
    caller: dict[str, Any] | None = None  # code that builds the arguments (`callers.Caller`)
    # Why the rewrite still needs AutoGraph (a tensor `if` left as it was):
    # then it is not run with `autograph=False`.
    needs_autograph: str | None = None
    # The fixes the rewrite applied in this code ("TFR107 line 12"), when
    # known: a print the original's trace runs once may be left so only by
    # a rewrite known to convert no print.
    fixes: tuple[str, ...] = ()
    # A train step nothing in the project runs and no harness is configured
    # for: verify writes harnesses with stand-ins (`stand_ins`), and says
    # this (what to write instead) when none runs the original.
    stand_in_hint: str | None = None

    @property
    def keeps_prints(self) -> bool:
        return claims_none_of(self.fixes, PRINT_RULES)

    @property
    def keeps_autograph_needs(self) -> bool:
        return claims_none_of(self.fixes, AUTOGRAPH_RULES)

    @property
    def restores_gradients(self) -> bool:
        return claims_any_of(self.fixes, GRADIENT_RULES)


class Verifier:
    def __init__(self, request: Request) -> None:
        self.request = request
        self.options = request.options
        self.outcome = Outcome(
            request.qualname, "rewrite" if request.rewrite_source is not None else "original"
        )
        self.frozen_in_original: set[str] = set()
        # An input on which the original samples anew, when it is random.
        self.sampling: tuple[str, dict[str, Any]] | None = None
        # The original traced (with AutoGraph, or without), and its runs by
        # (autograph, input label): `_original_traced`, `_original_traced_call`.
        self.original_traced_fns: dict[bool, Any] = {}
        self.original_traced_runs: dict[tuple[bool, str], Any] = {}
        # How the original's prints differ traced, if they do.
        self.original_print_problem: str | None = None

    # Loading ---------------------------------------------------------------

    def _load(self) -> None:
        r = self.request
        factory = None
        if r.factory is not None:
            from tfrewrite.verify import harness

            factory = harness.load_builder(r.factory)
        elif r.harness is not None:
            from tfrewrite.verify import harness

            # A train-step method's object is built from the harness entries.
            factory = harness.instance_factory(harness.load_builder(r.harness))
        self.stand_ins: list[tuple[Any, stand_ins.GeneratedHarness]] = []
        if r.stand_in_hint is not None and r.harness is None and r.factory is None:
            from tfrewrite.verify import harness

            self.stand_ins = self._stand_in_harnesses()
            factory = harness.instance_factory(self.stand_ins[0][0])
        configured = {k: inputs.spec_from_json(v) for k, v in r.specs.items()}
        # Arguments from the code that calls the function (see `caller_capture`):
        # built once, from the original, under the same seeds as every run.
        self.captured: dict[str, Any] | None = None
        self.provided: dict[str, Any] = {}  # module globals that code bound
        if (
            r.caller is not None
            and r.harness is None
            and not configured
            and not r.caller.get("fallback")
        ):
            random.seed(SEED)
            np.random.seed(SEED)
            tf.random.set_seed(SEED)
            self.captured = caller_capture.for_function(
                r.caller, r.original_source, r.rewrite_source, r.path, r.package,
                self.options.caller_seconds,
            )  # fmt: skip
        self.original = loader.load_function(
            r.original_source, r.qualname, "original", r.path, r.package, factory=factory
        )
        if self.captured is not None:
            self.captured, self.provided, specs = caller_capture.as_inputs(
                self.captured, self.original.python_function
            )
            self.original.module.__dict__.update(self.provided)
        if r.qualname in loader.built_with:
            self.outcome.warnings.append(loader.built_with[r.qualname])
        self.rewrite = None
        self.recorder = None
        self.instrumented = None
        self.traced_options: dict[str, Any] = {}
        if r.rewrite_source is not None:
            self.rewrite = loader.load_function(
                r.rewrite_source, r.qualname, "rewrite", r.path, r.package, factory=factory
            )
            self.rewrite.module.__dict__.update(self.provided)
            self.traced_options = decorator_options(self.rewrite.function)
        if self.captured is not None:
            self.searchable = False
            self.specs = specs
        elif r.harness is None:
            signature = self.traced_options.get("input_signature") or decorator_options(
                self.original.function
            ).get("input_signature")
            from_signature = (
                inputs.specs_from_signature(signature, self.original.python_function)
                if signature is not None and not configured
                else None
            )
            # Nothing configured and no input_signature: the defaults are a
            # first guess, searched further when the original rejects them.
            self.searchable = not configured and not from_signature
            self.specs = from_signature or inputs.specs_for(
                self.original.python_function, configured, guess=self.searchable
            )
        if self.rewrite is not None:
            piece = module_slice.slice_module(r.rewrite_source, r.qualname, r.path)
            tree, conds = coverage.instrument(r.original_source, piece.tree)
            if conds:
                self.recorder = coverage.BranchRecorder(conds)
                self.instrumented = loader.load_function(
                    r.rewrite_source,
                    r.qualname,
                    "rewrite-coverage",
                    r.path,
                    r.package,
                    tree=tree,
                    extra_globals={coverage.RECORDER_NAME: self.recorder},
                    factory=factory,
                )
                self.instrumented.module.__dict__.update(self.provided)

    def _stand_in_harnesses(self) -> list[tuple[Any, stand_ins.GeneratedHarness]]:
        """The harnesses verify writes for this train step, each with its
        `build`; raises `stand_ins.NoStandIn` when none can be written."""
        r = self.request
        found, why = stand_ins.for_step(r.original_source, r.qualname)
        if not found:
            raise stand_ins.NoStandIn(f"{r.stand_in_hint} ({why})")
        return [(stand_ins.builder(h.source), h) for h in found]

    def _adopt_intended_changes(self) -> None:
        """The reference adopts `training=True` where the rewrite adds it (see `intent`)."""
        r = self.request
        if r.rewrite_source is None:
            return
        adopted, lines = intent.adopt_training_flag(r.original_source, r.rewrite_source)
        if lines:
            self.request = dataclasses.replace(r, original_source=adopted)
            self.outcome.warnings.append(
                "the reference is the original with training=True where the rewrite adds it "
                f"(original {line_names(lines)}): "
                "dropout and batch normalisation now run in training mode, on purpose"
            )

    def run(self) -> Outcome:
        datasets.install()  # user code's Keras dataset loaders get generated arrays
        pretrained.install()  # and applications not downloaded get seeded weights
        project_imports.missing.clear()
        pretrained.STOOD_IN.clear()
        self._run_all()
        stood_in = pretrained.describe()
        if stood_in:
            self.outcome.warnings.append(stood_in)
        if self.outcome.verdict in ("error", "not proven") and project_imports.missing:
            # A package the workers lack, also where user-facing code turned
            # the ImportError into a result (a replayed loop's set-up).
            self.outcome.needs_package = str(project_imports.missing[0])
        return self.outcome

    def _run_all(self) -> Outcome:
        self._adopt_intended_changes()
        loop = self.request.loop
        if loop is not None and not loop.get("fallback"):
            return self._run_loop(loop)
        if not self._load_and_run():
            return self.outcome
        caller = self.request.caller or {}
        if caller.get("fallback") and self.outcome.unproven and not self.outcome.checks:
            # Synthesised inputs did not fit: the script's own call gives real ones.
            plain = {k: v for k, v in caller.items() if k != "fallback"}
            if not self._again("checked on the arguments its caller builds", plain):
                return self.outcome
        if loop is not None and self.outcome.unproven:
            # Synthesised inputs did not fit (a step on images and labels): the
            # loop that calls the function gives it real ones. That loop's
            # function takes no arguments: the function's caller is not its.
            self._again("proven through the loop that calls it", None, loop)
        return self.outcome

    def _again(self, how: str, caller: dict[str, Any] | None, loop: Any = None) -> bool:
        """Verify afresh with other arguments (`caller`, or the `loop` that
        calls the function), saying why first; False when loading gave the
        result."""
        why = (self.outcome.unproven or "").split(";")[0]
        self.request = dataclasses.replace(self.request, caller=caller)
        self.outcome = Outcome(self.request.qualname, self.outcome.mode)
        loaded = True
        if loop is not None:
            self._run_loop(loop)
        else:
            loaded = self._load_and_run()
        self.outcome.warnings.insert(0, f"{how}: {why}")
        return loaded

    def _load_and_run(self) -> bool:
        """Load both sides and run the checks; False when loading gave the result."""
        try:
            self._load()
        except project_imports.MissingPackage as err:
            self.outcome.needs_package = str(err)
            return False
        except (
            loader.NeedsFactory,
            loader.Unreachable,
            caller_capture.CallerProblem,
            stand_ins.NoStandIn,
        ) as err:
            self.outcome.unproven = str(err)
            self.outcome.warnings.append(self.outcome.unproven)
            return False
        except (Exception, SystemExit):
            self.outcome.error = "cannot load the function:\n" + traceback.format_exc(limit=6)
            return False
        try:
            self._run()
        except (Exception, SystemExit):
            self.outcome.error = traceback.format_exc(limit=8)
        return True

    def _run_loop(self, loop: dict[str, Any]) -> Outcome:
        try:
            self._replay_loop(loop)
        except (Exception, SystemExit):
            self.outcome.error = traceback.format_exc(limit=8)
        return self.outcome

    def _run(self) -> None:
        # User code loaded earlier in this worker (a harness importing a
        # script) may have left `run_functions_eagerly(True)` on: every
        # "traced" run would then be eager. Each function starts from graphs.
        tf.config.run_functions_eagerly(False)
        # Reproducible runs: the same draws and the same random streams every time.
        random.seed(SEED)
        np.random.seed(SEED)
        tf.random.set_seed(SEED)
        if self.request.harness is not None:
            from tfrewrite.verify import harness

            spec = self.request.harness
            self._train_steps(harness.load_builder(spec), spec)
            return
        if self.stand_ins:
            self._stand_in_steps()
            return
        if self.searchable and not self._fit_inputs():
            return
        base = [
            (f"random draw (seed {seed})", inputs.draw(self.specs, seed))
            for seed in range(self.options.draws)
        ]
        if self.captured is not None:
            base = [(self._spec_text(), self.captured)]
        short = inputs.short_batch(self.specs) if self.captured is None else None
        fixed_batch = any(
            spec.shape.rank and spec.shape[0] is not None
            for spec in self.traced_options.get("input_signature") or ()
            if hasattr(spec, "shape")
        )
        if short is not None and not fixed_batch:
            # Batches of another size (the short last batch of an epoch):
            # a step traced for one batch size must still work on the next.
            specs, full, size = short
            args = inputs.draw(specs, self.options.draws)
            if not call(self.original.python_function, args, eager=True).failed:
                base.append((f"short batch ({size} rows, after {full})", args))
        reference = call(self.original.python_function, base[0][1], eager=True)
        if reference.failed and project_imports.missing_package(reference.error) is not None:
            self.outcome.needs_package = str(project_imports.missing_package(reference.error))
            return
        if reference.failed:
            # Not an error of the environment: the synthesised inputs do not fit the function.
            where = self._spec_text() if self.captured is not None else None
            key = self.request.config_key or self.request.qualname
            self.outcome.unproven = (
                f"the original raised {reference.describe_error()} on "
                f"{where or f'the synthesised inputs ({self._spec_text()})'}; give its inputs in "
                f'[tool.tfrewrite.verify] inputs."{key}"'
            )
            self.outcome.warnings.append(self.outcome.unproven)
            self.outcome.error_traceback = reference.traceback()
            return
        self.outcome.prints = bool(reference.printed.text.strip())
        proof = self._proof_set(base, fixed_batch)
        sampling = self.sampling = self._samples_anew(reference, base[0], proof)
        self.outcome.stochastic = sampling is not None
        self.outcome.inputs = [label for label, _ in proof]
        self._original_divergence(proof)
        if self.rewrite is not None:
            if self.outcome.stochastic:
                randomness.check_random(
                    self.outcome,
                    self.original.python_function,
                    self.rewrite.python_function,
                    self._traced(),
                    proof,
                    self.options.samples,
                    sampling,
                )
            else:
                self._deterministic_checks(proof)
            if self.outcome.prints:
                fresh = self._fresh("rewrite")
                self._print_checks(
                    tf.function(fresh.python_function, **self.traced_options),
                    self._batch_cases(proof),
                    CHECK_PRINTS,
                )
            self._global_checks(proof[0])
        if self.options.xla:
            self._xla(proof[0])

    def _replay_loop(self, loop: dict[str, Any]) -> None:
        """A training loop: replayed before the rewrite (eagerly) and after it."""
        from tfrewrite.verify import harness, replay_comparison

        r = self.request
        arguments = rewrite_arguments = None
        if r.harness is not None:
            builder = harness.load_builder(r.harness)
            arguments = lambda: harness.build_arguments(builder)  # noqa: E731
        elif r.caller is not None:
            arguments, rewrite_arguments = caller_capture.for_loop(
                r.caller, r.original_source, r.rewrite_source, r.path, r.package,
                self.options.caller_seconds,
            )  # fmt: skip
        replay_comparison.verify_loop(
            self.outcome,
            r.original_source,
            r.rewrite_source or r.original_source,
            tuple(loop["original"]),
            tuple(loop["rewrite"]),
            r.path,
            r.package,
            arguments,
            self.options.rtol,
            self.options.atol,
            loop.get("step"),
            loop.get("hint"),
            rewrite_arguments,
        )
        if r.harness is not None and not self.outcome.unproven:
            self.outcome.inputs.append(
                f"the arguments of `{loop['original'][0]}` built by {r.harness}"
            )
        elif r.caller is not None and not self.outcome.unproven:
            caller = callers.Caller.from_json(r.caller)
            self.outcome.inputs.append(
                f"the arguments of `{caller.function}` built by {caller.describe()}"
            )

    def _stand_in_steps(self) -> None:
        """A train step through the first harness verify wrote whose stand-ins
        run the original; not proven, with what to write, when none does."""
        from tfrewrite.verify import harness

        failures = []
        for builder, generated in self.stand_ins:
            try:
                harness.run_once(builder, self.original, eagerly)
            except Exception as err:  # user code on stand-ins: try the next
                failures.append(f"{type(err).__name__}: {str(err).strip()[:160]}")
                continue
            self._train_steps(builder, "a harness verify wrote (stand-ins)")
            self.outcome.inputs[0] = f"a harness verify wrote: {generated.described}"
            self.outcome.warnings.append(
                "proven on stand-ins (a one-layer model, synthesised batches): the step's code "
                "is generic in the model it trains; to prove it on your model, keep the harness "
                "verify wrote, build your model in it and configure it"
            )
            self.outcome.generated_harness = generated.source
            return
        self.outcome.unproven = (
            f"{self.request.stand_in_hint} (the {len(failures)} harnesses with stand-ins verify "
            f"wrote did not run the original; the first raised {failures[0]})"
        )
        self.outcome.warnings.append(self.outcome.unproven)
        self.outcome.generated_harness = self.stand_ins[0][1].source

    def _train_steps(self, builder: Callable[[], dict[str, Any]], builder_spec: str) -> None:
        """A train step: k steps of the original eagerly against k steps of
        the rewrite (or, alone, of the original) traced, from the same weights."""
        from tfrewrite.verify import harness

        subject = self.rewrite if self.rewrite is not None else self.original
        self.outcome.inputs = [f"batches from {builder_spec}"]
        judged = Outcome(self.outcome.function, self.outcome.mode)
        harness.compare_training(
            judged, builder, self.original, subject, self.options.rtol, self.options.atol, eagerly
        )
        self.outcome.inputs += judged.inputs
        self.outcome.stochastic = judged.stochastic
        for name, check in judged.checks.items():
            if self.rewrite is None and not check.ok:
                self.outcome.divergences.append(
                    f"traced train steps differ from eager: {check.detail}"
                )
            self.outcome.checks[name] = check
        if self.recorder is None or any(not c.ok for c in self.outcome.checks.values()):
            return
        raised = harness.cover_branches(builder, self.instrumented, self.recorder, eagerly)
        self.outcome.branches = self.recorder.summary()
        missing = self.recorder.never_taken(
            f"on the batches of {builder_spec}", "other batches in the harness must reach it"
        )
        if missing and raised:
            self.outcome.warnings.append(f"run eagerly on the harness batches, it raised {raised}")
        self.outcome.warnings.extend(missing)

    def _fresh(self, which: str) -> loader.LoadedFunction:
        """The original or the rewrite loaded anew. A print fires when a
        function is traced: a helper `tf.function` of the module that an
        earlier check already traced would print nothing in the print check,
        so each print check traces from a fresh module."""
        r = self.request
        source = r.rewrite_source if which == "rewrite" else r.original_source
        factory = None
        if r.factory is not None:
            from tfrewrite.verify import harness

            factory = harness.load_builder(r.factory)
        loaded = loader.load_function(
            source, r.qualname, f"{which}-prints", r.path, r.package, factory=factory
        )
        loaded.module.__dict__.update(self.provided)
        return loaded

    def _traced(self, autograph: bool = True) -> Callable:
        """The rewrite under `tf.function` with the options its own decorator
        gives (input_signature, reduce_retracing, jit_compile)."""
        return tf.function(self.rewrite.python_function, autograph=autograph, **self.traced_options)

    @staticmethod
    def _batch_cases(proof: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
        """The first input and the short batch, if any."""
        return [proof[0], *(case for case in proof[1:] if case[0].startswith("short batch"))]

    def _fit_inputs(self) -> bool:
        """Search an input signature the original runs on (see `signatures`)
        when the default inputs do not fit. False (with the outcome saying
        why) when nothing fits."""
        fn = self.original.python_function
        first = call(fn, inputs.draw(self.specs, 0), eager=True)
        if not first.failed:
            return True
        found = project_imports.missing_package(first.error)
        if found is not None:
            self.outcome.needs_package = str(found)
            return False
        r = self.request
        try:
            tree = ast.parse(r.original_source)
            node = module_slice.find_definition(tree, r.qualname)
            usages = signatures.analyse(tree, node, "." in r.qualname)
        except (project_imports.LoadError, SyntaxError):
            return True
        blocked = signatures.blockers(usages)
        key = r.config_key or r.qualname
        if blocked or set(usages) != set(self.specs):
            return True  # reported below with the default inputs' error
        tried = 0
        for label, specs in signatures.candidates(usages):
            if tried >= signatures.MAX_CANDIDATES:
                break
            tried += 1
            if not call(fn, inputs.draw(specs, 0), eager=True).failed:
                self.specs = specs
                self.outcome.warnings.append(
                    f"inputs found by search ({label}): {signatures.describe(specs)}; the "
                    f"defaults raised {first.describe_error()}"
                )
                return True
        self.outcome.unproven = (
            f"no input signature fits: the original raised {first.describe_error()} on the "
            f"default inputs ({self._spec_text()}) and on {tried} searched signatures; give "
            f'its inputs in [tool.tfrewrite.verify] inputs."{key}" = '
            f"{signatures.template(usages)} (edit the shapes and dtypes)"
        )
        self.outcome.warnings.append(self.outcome.unproven)
        self.outcome.error_traceback = first.traceback()
        return False

    def _shares_print_problem(self, problem: str) -> bool:
        """The rewrite's prints differ traced exactly as the original's do,
        and its fixes are known and convert no print: a print the rules
        leave as written (a shape printed while tracing), not a fault of
        the rewrite. A rewrite whose fixes are unknown (two files given to
        compare) must print every call."""
        same = problem.replace(REWRITE, ORIGINAL_TRACED) == self.original_print_problem
        return same and self.request.keeps_prints

    def _shares_failure(self, check: str, label: str, args: dict[str, Any], got: Any) -> bool:
        """The traced rewrite raises as the original does traced: a hazard
        of the original the rewrite left as it was (its divergence), not one
        it made; said once, in a warning. Without AutoGraph, also a need for
        AutoGraph the original had (`len()` of a tensor argument), when the
        rewrite's fixes are known and remove no such need."""
        tries = [True]
        if check == CHECK_NO_AUTOGRAPH and self.request.keeps_autograph_needs:
            tries.insert(0, False)
        for autograph in tries:
            original = self._original_traced_call(label, args, autograph)
            if not original.failed or type(original.error) is not type(got.error):
                continue
            if autograph:
                self._warn_once(
                    "traced, the rewrite raises",
                    f"{type(got.error).__name__} on {label} as the original does: a hazard of "
                    "the original the rewrite did not remove (see its divergence)",
                )
            else:
                self._warn_once(
                    "without AutoGraph, the rewrite raises",
                    f"{got.describe_error()} on {label} as the original does: it needs "
                    "AutoGraph as the original did (no fix here was asked to remove that need)",
                )
            return True
        return False

    def _warn_once(self, start: str, rest: str) -> None:
        """A warning said on the first input where it happens only."""
        if not any(w.startswith(start) for w in self.outcome.warnings):
            self.outcome.warnings.append(f"{start} {rest}")

    def _samples_anew(
        self, reference: Any, first: tuple[str, dict[str, Any]], proof: list
    ) -> tuple[str, dict[str, Any]] | None:
        """The input on which the original is random (a further call on it
        differs), or None. Up to REPEATS calls on the first input (a die with
        three faces repeats 9 times with p = 4e-5), then one on each input of
        the proof set: a function may draw only in a branch the first input
        does not take (`if tf.size(valid) > 0: i = tf.random.shuffle(valid)[0]`)."""
        fn = self.original.python_function
        for _ in range(REPEATS):
            again = call(fn, first[1], eager=True)
            if not again.failed and not identical(reference.value, again.value):
                return first
        for case in proof[:PROOF_REPEATS]:
            once, twice = call(fn, case[1], eager=True), call(fn, case[1], eager=True)
            if not (once.failed or twice.failed) and not identical(once.value, twice.value):
                return case
        return None

    def _spec_text(self) -> str:
        if self.captured is not None:
            caller = callers.Caller.from_json(self.request.caller or {})
            return f"the arguments {caller.describe()} builds"
        return ", ".join(f"{k} = {v}" for k, v in self.specs.items())

    # Inputs and coverage ------------------------------------------------------

    def _proof_set(
        self, base: list[tuple[str, dict[str, Any]]], fixed_batch: bool
    ) -> list[tuple[str, dict[str, Any]]]:
        """The base draws, inputs on both sides of every condition the code
        tests, and inputs that take branches the others did not (see
        `proof_inputs`)."""
        r = self.request
        found = conditions.collect(
            r.original_source, r.rewrite_source, r.qualname, method="." in r.qualname
        )
        measure = proof_inputs.measurer(
            self.original.module, self.rewrite.module if self.rewrite is not None else None
        )
        boundary = boundaries.variants(
            base[0][1], self.specs, found, measure, empty=not fixed_batch
        )
        proof = proof_inputs.proof_set(
            base,
            self.specs,
            self.original.python_function,
            boundary,
            self.recorder if self.instrumented is not None else None,
            self.instrumented.python_function if self.instrumented is not None else None,
            self.options.search,
        )
        if self.recorder is not None and self.instrumented is not None:
            self.outcome.branches = self.recorder.summary()
        return proof

    # Rewrite checks ------------------------------------------------------------

    def _deterministic_checks(self, proof: list[tuple[str, dict[str, Any]]]) -> None:
        rtol, atol = self.options.rtol, self.options.atol
        original = self.original.python_function
        rewrite = self.rewrite.python_function
        variants = {
            CHECK_EAGER: (rewrite, True),
            CHECK_TRACED: (self._traced(), False),
            CHECK_NO_AUTOGRAPH: (self._traced(autograph=False), False),
        }
        if self.request.needs_autograph:
            del variants[CHECK_NO_AUTOGRAPH]
            self.outcome.warnings.append(
                "not run with autograph=False: the rewrite still needs AutoGraph ("
                + self.request.needs_autograph
                + ")"
            )
        grads_original = None
        grads_rewrite = None
        for label, args in proof:
            expected = call(original, args, eager=True)
            for name, (fn, eager) in variants.items():
                check = self.outcome.check(name)
                got = call(fn, args, eager=eager)
                if got.failed and not eager and not expected.failed:
                    if self._shares_failure(name, label, args, got):
                        continue
                if expected.failed:
                    if not got.failed or type(got.error) is not type(expected.error):
                        check.fail(
                            f"on {label}: the original raised {expected.describe_error()}, "
                            "the rewrite "
                            + (f"raised {got.describe_error()}" if got.failed else "did not")
                        )
                    else:
                        check.runs += 1
                elif got.failed:
                    hint = (
                        " (the rewrite still needs AutoGraph)"
                        if "OperatorNotAllowedInGraph" in type(got.error).__name__
                        else ""
                    )
                    check.fail(f"on {label}: raised {got.describe_error()}{hint}", got)
                else:
                    check.add(compare(expected.value, got.value, rtol, atol), label)
            names = float_args(args)
            if expected.failed or not names or not has_float_output(expected.value):
                continue
            if grads_original is None:
                grads_original = gradient_fn(original, names)
                grads_rewrite = tf.function(gradient_fn(rewrite, names))
            check = self.outcome.check(CHECK_GRADIENTS)
            want = call(grads_original, args, eager=True)
            got = call(grads_rewrite, args)
            if want.failed:
                continue  # not differentiable eagerly: nothing to compare
            if got.failed:
                if not self._shares_failure(CHECK_TRACED, label, args, got):
                    check.fail(f"on {label}: gradient raised {got.describe_error()}", got)
                continue
            reference = want.value
            if self.request.restores_gradients:
                restored = restored_gradients.adopt(original, args, names, want.value, got.value)
                if restored.problems:
                    check.fail(f"on {label}: {restored.problems[0]}")
                    continue
                reference = restored.reference
                if restored.names:
                    self._warn_once(
                        "gradients flow",
                        "with respect to "
                        + ", ".join(f"`{n}`" for n in restored.names)
                        + " in the rewrite, where the original's host computation (NumPy, "
                        "`.numpy()`) cut them: intended by its fix, and equal to the finite "
                        "differences of the original's value",
                    )
            where = "d/d(" + ", ".join(names) + ")"
            difference = compare(reference, got.value, rtol * 10, atol * 10, where)
            if not difference.ok:
                difference = self._within_tracing_noise(
                    original, names, args, label, reference, got.value, difference, where
                )
            check.add(difference, label)

    def _within_tracing_noise(
        self,
        original: Callable,
        names: list[str],
        args: dict[str, Any],
        label: str,
        reference: Any,
        got: Any,
        difference: Any,
        where: str,
    ) -> Any:
        """A gradient the rewrite gets as far from the eager reference as the
        original's own trace gets (ill-conditioned inputs: gradients of
        1e13 where float32 keeps 7 digits): the noise of tracing, not of the
        rewrite. The tolerance grows to four times what tracing the original
        moves its gradient by on this input, when that is finite and under
        `_MAX_TRACING_NOISE` (1%: beyond, the trace computes something
        else); said in a warning."""
        traced_original = call(tf.function(gradient_fn(original, names)), args)
        if traced_original.failed:
            return difference
        noise = compare(reference, traced_original.value, 0.0, 0.0, where)
        if noise.max_rel == 0.0 and noise.max_abs == 0.0:
            return difference
        if not (math.isfinite(noise.max_rel) and math.isfinite(noise.max_abs)):
            return difference  # a NaN or infinity of the trace is no noise
        if noise.max_rel > _MAX_TRACING_NOISE:
            return difference  # the original's trace computes another gradient
        rtol, atol = self.options.rtol, self.options.atol
        widened = compare(
            reference,
            got,
            max(rtol * 10, 4 * noise.max_rel),
            max(atol * 10, 4 * noise.max_abs),
            where,
        )
        if widened.ok:
            self._warn_once(
                "gradients differ",
                f"from the eager original's on {label} by up to {difference.max_rel:.2g} "
                f"(relative), within four times what tracing the original itself moves them by "
                f"there ({noise.max_rel:.2g}): numeric noise of ill-conditioned inputs",
            )
        return widened

    def _print_checks(
        self,
        traced: Callable,
        cases: list[tuple[str, dict[str, Any]]],
        name: str,
        original_side: bool = False,
    ) -> str | None:
        """Three calls of `traced` on the first input, then one on each other
        input (another batch size retraces), must each print what one eager
        call of the original prints there, on the same stream (standard
        output or standard error). Returns the failure (or None)."""
        check = None if original_side else self.outcome.check(name)
        subject = ORIGINAL_TRACED if original_side else REWRITE
        moved = (
            frozenset({("stdout", "stderr")})
            if self.options.print_output_stream == "stderr" and not original_side
            else frozenset()
        )
        problem = None
        runs = 0
        for index, (label, args) in enumerate(cases):
            expected = call(self.original.python_function, args, eager=True)
            calls = [call(traced, args) for _ in range(3 if index == 0 else 1)]
            runs += len(calls)
            shown = expected.printed.text.strip()[:80]
            if any(c.failed for c in calls):
                problem = f"raised {next(c for c in calls if c.failed).describe_error()}"
            elif index == 0 and not calls[0].printed.text.strip():
                problem = f"printed nothing, the original prints {shown!r} on every call"
            elif index == 0 and not calls[1].printed.text.strip():
                problem = (
                    "print fires once, at trace time: the second traced call printed nothing, "
                    f"the original prints {shown!r} on every call"
                )
            else:
                # A random function's values differ call to call: only how
                # many each stream shows, and after the first (tracing) call.
                stochastic = self.outcome.stochastic
                for i, c in enumerate(calls, start=1):
                    if stochastic and i == 1:
                        continue
                    problem = capture.compare_printed(
                        expected.printed,
                        c.printed,
                        self.options.rtol * 10,
                        self.options.atol * 10,
                        call=i,
                        subject=subject,
                        values=not stochastic,
                        moved=moved,
                    )
                    if problem:
                        break
            if problem:
                problem = f"on {label}: {problem}"
                break
        if check is not None:
            if problem and self._shares_print_problem(problem):
                check.runs += runs
                self.outcome.warnings.append(
                    f"traced, the rewrite prints as the original does traced ({problem}): a "
                    "hazard of the original no fix here was asked to remove (see its divergence)"
                )
            elif problem:
                check.fail(problem)
            else:
                check.runs += runs
        return problem

    # Divergence in the original ------------------------------------------------

    def _original_divergence(self, proof: list[tuple[str, dict[str, Any]]]) -> None:
        before = len(self.outcome.divergences)
        self._original_traced(proof)
        if self.outcome.mode == "original":
            self._record(CHECK_ORIGINAL_TRACED, self.outcome.divergences[before:], len(proof))
        if self.outcome.prints:
            before = len(self.outcome.divergences)
            problem = self._print_checks(
                tf.function(self._fresh("original").python_function),
                self._batch_cases(proof),
                "",
                original_side=True,
            )
            if problem:
                self.outcome.divergences.append(f"printing: {problem}")
                self.original_print_problem = problem
            if self.outcome.mode == "original":
                self._record(CHECK_ORIGINAL_PRINTS, self.outcome.divergences[before:], 3)
        if not self.outcome.stochastic and self.original.slice.flags:
            before = len(self.outcome.divergences)
            for name, message in flags.frozen(
                self.original, self.original, proof[0][1], self.options
            ):
                self.frozen_in_original.add(name)
                self.outcome.divergences.append(message)
            if self.outcome.mode == "original":
                self._record(
                    CHECK_ORIGINAL_GLOBALS,
                    self.outcome.divergences[before:],
                    len(self.original.slice.flags),
                )

    def _record(self, name: str, problems: list[str], runs: int) -> None:
        """In original-only mode the table lists the divergence checks too."""
        check = self.outcome.check(name)
        check.runs = runs
        if problems:
            check.ok, check.detail = False, problems[0]

    def _original_traced_call(
        self, label: str, args: dict[str, Any], autograph: bool = True
    ) -> Any:
        """The original run traced (with AutoGraph or without) on one input
        of the proof set: the run the divergence check made, when it reached
        that input."""
        key = (autograph, label)
        if key not in self.original_traced_runs:
            if autograph not in self.original_traced_fns:
                self.original_traced_fns[autograph] = tf.function(
                    self.original.python_function, autograph=autograph
                )
            self.original_traced_runs[key] = call(self.original_traced_fns[autograph], args)
        return self.original_traced_runs[key]

    def _original_traced(self, proof: list[tuple[str, dict[str, Any]]]) -> None:
        original = self.original.python_function
        traced = self.original_traced_fns[True] = tf.function(original)
        rtol, atol = self.options.rtol, self.options.atol
        if self.outcome.stochastic:
            label, args = self.sampling or proof[0]
            a, b = call(traced, args), call(traced, args)
            if a.failed:
                self.outcome.divergences.append(
                    f"traced, the original raises {a.describe_error()} on {label}; eagerly it runs"
                )
            elif identical(a.value, b.value):
                self.outcome.divergences.append(
                    "random value frozen at trace time: two traced calls both return "
                    f"{describe(a.value)}, "
                    "eagerly every call samples anew"
                )
        else:
            for label, args in proof:
                eager = call(original, args, eager=True)
                got = self.original_traced_runs[(True, label)] = call(traced, args)
                if eager.failed:
                    continue
                if got.failed:
                    self.outcome.divergences.append(
                        f"traced, the original raises {got.describe_error()} on {label}; "
                        "eagerly it runs"
                    )
                    break
                diff = compare(eager.value, got.value, rtol, atol)
                if not diff.ok:
                    self.outcome.divergences.append(
                        f"traced differs from eager on {label}: {diff.detail}"
                    )
                    break

    def _global_checks(self, case: tuple[str, dict[str, Any]]) -> None:
        if self.outcome.stochastic or not self.original.slice.flags:
            return
        flags.check_rewrite(
            self.outcome.check(CHECK_GLOBALS),
            self.outcome.warnings,
            self.original,
            self.rewrite,
            case,
            self.frozen_in_original,
            self.options,
        )

    # XLA ----------------------------------------------------------------------

    def _xla(self, case: tuple[str, dict[str, Any]]) -> None:
        label, args = case
        subject = self.rewrite if self.rewrite is not None else self.original
        who = "the rewrite" if self.rewrite is not None else "the function"
        if any(not c.ok for c in self.outcome.checks.values()):
            return  # already failing without XLA: reported by the other checks
        got = call(tf.function(subject.python_function, jit_compile=True), args)
        if got.failed:
            text = str(got.error)
            op = next(
                (w for w in ("StringFormat", "PrintV2", "PyFunc", "EagerPyFunc") if w in text), None
            )
            reason = f"unsupported op {op}" if op else got.describe_error()
            self.outcome.warnings.append(
                f"{who} cannot be compiled with XLA (jit_compile=True): {reason}; Keras compiles "
                'fit with XLA by default on GPUs (jit_compile="auto")'
            )


def verify(request: Request) -> dict[str, Any]:
    """Run every check for one function; the result as JSON-ready data."""
    started = time.perf_counter()
    outcome = Verifier(request).run()
    data = outcome.to_json()
    data["seconds"] = round(time.perf_counter() - started, 3)
    return data
