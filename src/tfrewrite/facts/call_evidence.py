"""Call-site evidence in pass 1: what each argument of a call to a project
function is, as far as one file can tell: `s` a scalar tensor, `t` a tensor,
`p` a Python value, `?` unknown.

The project facts read these `CallSite`s to decide whether a parameter of a
traced function may be a Python value (a retracing hazard) or a tensor (a
condition that is no Python `if`); the evidence needs what names and `self`
attributes hold, so it is gathered while the visitor walks the file.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from tfrewrite.facts.function_facts import is_self_attribute, self_assignments
from tfrewrite.facts.index_names import (
    BUILTIN_NAMES,
    _bound_names,
    dotted,
    held_table_item,
)
from tfrewrite.facts.index_records import CallSite, FunctionInfo, ModuleIndex
from tfrewrite.facts.keras_list_properties import LIST_PROPERTIES, VARIABLE_LISTS
from tfrewrite.facts.parameter_names import is_config_name
from tfrewrite.facts.tensor_kinds import ALWAYS_SCALAR, REDUCTIONS, is_tensor_op

# Elements of a list or tuple argument whose evidence a call site records.
_STRUCTURE_SIZE = 16
_DISPLAYS = (ast.List, ast.Tuple)
# Top-level packages whose functions are never project functions.
EXTERNAL_ROOTS = frozenset(
    {
        "tensorflow",
        "numpy",
        "keras",
        "tf_keras",
        "jax",
        "torch",
        "math",
        "os",
        "sys",
        "logging",
        "random",
        "time",
        "json",
        "re",
        "functools",
        "itertools",
        "collections",
        "typing",
        "pathlib",
        "absl",
        "scipy",
        "pandas",
        "sklearn",
        "matplotlib",
        "tqdm",
        "tensorflow_datasets",
        "tensorflow_probability",
        "tensorflow_addons",
        "copy",
        "warnings",
        "argparse",
        "pickle",
        "shutil",
        "glob",
        "datetime",
        "contextlib",
        "inspect",
        "string",
        "io",
        "PIL",
        "cv2",
        "h5py",
    }
)
# Methods that read a tensor's value onto the host: their result is a NumPy
# or Python value, whatever they were called on.
_HOST_READS = frozenset({"numpy", "item", "tolist"})

_PYTHON_VALUE_CALLS = frozenset({"len", "int", "float", "bool", "str", "range", "round", "list"})
# Calls whose result is a tensor, or a variable read as one, of the value
# given first: a scalar when that value is a number.
_TENSOR_OF_VALUE = frozenset(
    {"tensorflow.constant", "tensorflow.convert_to_tensor", "tensorflow.Variable"}
)


# The keyword a call site records for `**mapping`: what fills the parameters
# no positional or named argument gives.
SPLAT = "**"


def _is_number(node: ast.AST | None) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float, bool))
        and not isinstance(node.value, complex)
    )


def number_defaults(args: ast.arguments) -> list[str]:
    """Parameters whose default is a number or a bool."""
    positional = [*args.posonlyargs, *args.args]
    pairs = list(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    pairs += [
        (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    ]
    return [arg.arg for arg, default in pairs if _is_number(default)]


def _reads_configuration(node: ast.Attribute) -> bool:
    """`config.expl_noise`, `self.config.expl_noise`, `args.lr`: an attribute
    of an object whose name says configuration holds a Python value."""
    owner = node.value
    if isinstance(owner, ast.Attribute) and is_self_attribute(owner):
        return is_config_name(owner.attr)
    return isinstance(owner, ast.Name) and owner.id != "self" and is_config_name(owner.id)


def _init_numbers(cls: ast.ClassDef) -> set[str]:
    """`self` attributes that hold Python numbers: assigned only in
    `__init__`, each time from a number, from a parameter of `__init__`
    whose default is a number (`self.sigma = sigma` with `sigma=0.1`), or
    from configuration (`self.span = config.mask_length`)."""
    numbers: set[str] = set()
    others: set[str] = set()
    defaults: dict[str, set[str]] = {}
    for method, attr, value in self_assignments(cls):
        if method.name not in defaults:
            init = method.name == "__init__"
            defaults[method.name] = set(number_defaults(method.args)) if init else set()
        number = (
            _is_number(value)
            or (isinstance(value, ast.Name) and value.id in defaults[method.name])
            or (isinstance(value, ast.Attribute) and _reads_configuration(value))
        )
        (numbers if number and method.name == "__init__" else others).add(attr)
    return numbers - others


# How `CallSite.objects` names what a method passes from `self.<attr>`.
HELD_ARGUMENT = "self."
# How it names a part of what a project function returns, unpacked by
# position (`actor, critic = get_model(...)`: `pkg.get_model[1]`).
PART_OPEN = "["


class CallEvidence:
    """The visitor's part that records call sites with their evidence."""

    index: ModuleIndex
    resolve: Callable[[ast.AST], str | None]
    function_stack: list[FunctionInfo]
    module_level_names: set[str]
    evidence: list[dict[str, str]]  # per scope: what a local name holds
    class_numbers: list[tuple[ast.ClassDef, set[str] | None]]
    class_stack: list[str]  # qualnames of the enclosing classes
    # Module-level names bound once, and per function being visited the
    # names its body binds and its call sites that forward a parameter.
    module_once: set[str]
    bound_here: list[set[str]]
    forwarding_sites: list[list[CallSite]]
    grown_names: list[set[str]]  # per scope: names a loop appends to so far
    loop_targets: list[set[str]]  # per enclosing loop of the scope: the names its `for` binds

    def _may_hold_tensor(self, value: ast.expr) -> bool:
        """Whether a value kept on `self` may be a tensor, as far as pass 1
        sees: tensor evidence, or a name (or a list or tuple of names) not
        known to hold a Python value, whose kind only the rules' data flow
        tells (`self.inputs = inputs`)."""
        if isinstance(value, (ast.List, ast.Tuple)):
            return bool(value.elts) and all(self._may_hold_tensor(e) for e in value.elts)
        if isinstance(value, ast.Name):
            return self._evidence(value) != "p"
        return self._evidence(value) in ("t", "s")

    def _evidence(self, node: ast.AST) -> str:
        """What an argument is: `s` a scalar tensor, `t` a tensor, `p` a
        Python value, `?` unknown."""
        if isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set)):
            return "p"
        if isinstance(node, (ast.JoinedStr, ast.Lambda, ast.ListComp, ast.DictComp)):
            return "p"
        if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
            return "p"
        if isinstance(node, ast.IfExp):
            # `True if epoch > n else False`: what both branches are.
            chosen = {self._evidence(node.body), self._evidence(node.orelse)}
            return chosen.pop() if len(chosen) == 1 else "?"
        if isinstance(node, ast.Name):
            return self._name_evidence(node.id)
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "ndim", "dtype"):
            return "p"
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape"
        ):
            return "p"  # `k.shape[2]`: a static dimension, an int or None
        if isinstance(node, ast.Attribute) and _reads_configuration(node):
            return "p"
        if isinstance(node, ast.Attribute) and node.attr in VARIABLE_LISTS:
            return "p"  # `model.trainable_variables`: a Python list of variables
        if isinstance(node, ast.Subscript):
            of = self._evidence(node.value)
            if of in ("t", "s"):
                return "t"  # an item or a slice of a tensor: a tensor
            if of == "p" and isinstance(node.value, ast.Call):
                return "p"  # of what a host call returns (`np.arange(n)[:, None]`)
        if is_self_attribute(node) and self.class_numbers:
            assert isinstance(node, ast.Attribute)
            if node.attr in LIST_PROPERTIES and self.index.derives_from_keras(self.class_stack[-1]):
                return "p"  # `self.losses`: a Python list of a layer or model
            cls, numbers = self.class_numbers[-1]
            if numbers is None:
                numbers = _init_numbers(cls)
                self.class_numbers[-1] = (cls, numbers)
            return "p" if node.attr in numbers else "?"
        if isinstance(node, ast.BinOp):
            # `self.sigma * (1. - test)`: Python numbers make a Python number;
            # a tensor operand makes a tensor.
            left, right = self._evidence(node.left), self._evidence(node.right)
            if "t" in (left, right):
                return "t"
            if left == right and left in "ps":
                return left
            if {left, right} == {"s", "p"}:
                return "s"
            return "?"
        if isinstance(node, ast.Call):
            if (
                isinstance(node.func, ast.Attribute)
                and node.func.attr in _HOST_READS
                and not node.args
                and not node.keywords
            ):
                return "p"  # `x.numpy()`: a NumPy value on the host
            name = self.resolve(node.func) or ""
            if name in _PYTHON_VALUE_CALLS or name.startswith("numpy."):
                # NumPy computes on the host: an array or a NumPy scalar
                # (given a symbolic tensor it raises, which TFR104 reports).
                return "p"
            if name in _TENSOR_OF_VALUE and node.args:
                first = node.args[0]
                if isinstance(first, ast.UnaryOp):
                    first = first.operand
                scalar = isinstance(first, ast.Constant) and isinstance(
                    first.value, (int, float, bool)
                )
                return "s" if scalar else "t"
            if name in ALWAYS_SCALAR or (
                name in REDUCTIONS
                and len(node.args) == 1
                and not any(kw.arg in ("axis", "keepdims") for kw in node.keywords)
            ):
                return "s"  # `tf.size(x)`, `tf.reduce_mean(x)`: no axis, a scalar
            if is_tensor_op(name):
                return "t"
        return "?"

    def _name_evidence(self, name: str) -> str:
        """What a name holds: as the innermost scope binds it, else, in a
        function that neither binds it nor takes it, as the module binds it
        once (`counter = tf.Variable(0)` read by a step)."""
        known = self.evidence[-1].get(name)
        if known is not None:
            return known
        if (
            len(self.evidence) > 1
            and name in self.module_once
            and name not in self.index.rebound_module_names  # `global name` somewhere
            and not any(name in info.params for info in self.function_stack)
            and not any(name in bound for bound in self.bound_here)
        ):
            return self.evidence[0].get(name, "?")
        return "?"

    def bind_names(self, target: ast.AST) -> None:
        """Names an assignment, loop or `with` binds in the function being
        visited: a parameter rebound there is not what its callers pass. A
        name rebound is no longer the list a loop grew (`states =
        np.array(states)`)."""
        grown = self.grown_names[-1]
        if grown:
            grown.difference_update(_bound_names(target))
        if not self.bound_here:
            return
        if isinstance(target, ast.Name):  # most often
            self.bound_here[-1].add(target.id)
        elif not isinstance(target, (ast.Attribute, ast.Subscript)):
            self.bound_here[-1].update(_bound_names(target))

    def settle_forwarded(self) -> None:
        """At the end of a function: forget what its call sites, and those of
        the functions nested in it, forward of a parameter it rebinds
        (anywhere in its body), of its own or, shadowing it, of a function
        around it. A site forwarding a parameter of a function around waits
        for that function's end too."""
        qualname = self.function_stack[-1].qualname if self.function_stack else ""
        inner = qualname + "."
        bound = self.bound_here.pop()
        for site in self.forwarding_sites.pop():
            site.forwarded = tuple(
                pair for pair in site.forwarded if pair[1] not in bound or pair[2].startswith(inner)
            )
            outer = any(
                pair[2] != qualname and not pair[2].startswith(inner) for pair in site.forwarded
            )
            if outer and self.forwarding_sites:
                self.forwarding_sites[-1].append(site)

    def _forwarded(self, node: ast.Call) -> tuple[tuple[str, str, str], ...]:
        """The arguments that are parameters of the calling function, or of
        a function around it (not `self`/`cls`), with that function:
        positional ones up to the first `*args`, and keywords. The nearest
        function with a parameter of that name is the one it names."""
        owners: dict[str, str] = {}
        for info in self.function_stack:  # outermost first: inner ones win
            own = info.params
            if info.class_name and own[:1] in (["self"], ["cls"]):
                own = own[1:]
            for name in own:
                owners[name] = info.qualname
        if not owners:
            return ()
        found: list[tuple[str, str, str]] = []
        for position, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                break
            if isinstance(arg, ast.Name) and arg.id in owners:
                found.append((str(position), arg.id, owners[arg.id]))
        found += [
            (kw.arg, kw.value.id, owners[kw.value.id])
            for kw in node.keywords
            if kw.arg and isinstance(kw.value, ast.Name) and kw.value.id in owners
        ]
        return tuple(found)

    def project_callee(self, func: ast.expr, callee: str) -> bool | None:
        """Whether a call of `func` (resolved to `callee`) may call a
        project function, and how: None when it cannot (a builtin, an
        external package's function, a method of a local object), else
        whether through `self.` (the callee's first parameter is bound)."""
        if isinstance(func, ast.Name):
            if func.id in BUILTIN_NAMES and func.id not in self.module_level_names:
                return None
            via_attribute = False
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            head = func.value.id
            via_attribute = head == "self"
            if not via_attribute and head not in self.index.imports:
                return None
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Attribute)
            and isinstance(func.value.value, ast.Name)
            and func.value.value.id == "self"
        ):
            via_attribute = True  # `self.memory.sample(...)`: a held object's method
        elif held_table_item(func) is not None:
            via_attribute = True  # `self.losses["gen"](...)`: a function the object holds
        else:
            return None
        if callee.split(".", 1)[0] in EXTERNAL_ROOTS:
            return None
        return via_attribute

    def _record_call_site(self, node: ast.Call, callee: str, instance: str | None = None) -> None:
        """`instance`: what calling the object `node.func` names calls
        (`pkg.Net()` for a `net = Net()`): a method with `self` bound, or
        the function a factory returned."""
        if instance is not None:
            callee, via_attribute = instance, True
            if callee.split(".", 1)[0] in EXTERNAL_ROOTS:
                return
        else:
            found = self.project_callee(node.func, callee)
            if found is None:
                return
            via_attribute = found
        args = "".join(
            "?" if isinstance(arg, ast.Starred) else self._evidence(arg) for arg in node.args
        )
        keywords = tuple(
            (kw.arg or SPLAT, self._evidence(kw.value) if kw.arg else self._splat(kw.value))
            for kw in node.keywords
        )
        caller = self.function_stack[-1].qualname if self.function_stack else ""
        forwarded = self._forwarded(node)
        structures = self._structures(node)
        arguments = [
            *((str(i), arg) for i, arg in enumerate(node.args)),
            *((kw.arg, kw.value) for kw in node.keywords if kw.arg),
        ]
        objects = tuple(
            (where, built) for where, value in arguments if (built := self._built_by(value))
        )
        named = tuple(
            (where, resolved)
            for where, value in arguments
            if (resolved := self._module_name(value))
        )
        held = self.index.classes[self.class_stack[-1]].set_up_tensors if self.class_stack else ()
        whole_shapes = tuple(
            where
            for where, value in arguments
            if is_self_attribute(value) and value.attr in held  # type: ignore[attr-defined]
        )
        short_batches = tuple(
            where
            for where, value in arguments
            if isinstance(value, ast.Name) and self._feeds_short_batch(value)
        )
        applied_batchers = tuple(
            (where, batcher)
            for where, value in arguments
            if where not in short_batches
            and isinstance(value, ast.Name)
            and (batcher := self._applied_batcher(value.id))
        )
        elements = set().union(*self.loop_targets) if self.loop_targets else set()
        loop_elements = tuple(
            where
            for where, value in arguments
            if isinstance(value, ast.Name) and value.id in elements
        )
        grown = self.grown_names[-1]
        grown_lists = tuple(
            where for where, value in arguments if isinstance(value, ast.Name) and value.id in grown
        )
        site = CallSite(
            callee,
            args,
            keywords,
            node.lineno,
            via_attribute,
            caller,
            forwarded,
            structures,
            objects,
            named,
            whole_shapes,
            short_batches,
            dotted(node.func) or "",
            grown_lists,
            applied_batchers,
            loop_elements,
        )
        self.index.call_sites.append(site)
        if forwarded:
            self.forwarding_sites[-1].append(site)

    def _built_by(self, value: ast.expr) -> str | None:
        """What built the object an argument passes: the call written there
        (`Agent(noise=OUNoise(2))`), or the one a name was bound to (`noise =
        OUNoise(2)`, then `Agent(noise=noise)`), as the module names it."""
        if isinstance(value, ast.Call):
            return self.resolve(value.func)
        if isinstance(value, ast.Name):
            return (
                self._local_factory(value.id)
                or self._unpacked_factory(value.id)
                or self._module_object(value)
            )
        if (
            isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and value.value.id == "self"
            and self.class_stack
        ):
            # What the class keeps in that attribute (`self.pi = PiModel()`),
            # which the project facts look up (`HELD_ARGUMENT`).
            return f"{HELD_ARGUMENT}{value.attr}"
        return None

    def _module_name(self, value: ast.expr) -> str | None:
        """What an argument names when it is a definition or an import of the
        module (`Model`, `models.Model`), resolved; None for anything else
        (a local, a call, a literal, a library's name)."""
        head = value
        while isinstance(head, ast.Attribute):
            head = head.value
        if not isinstance(head, ast.Name) or not self.names_module_scope(head.id):
            return None
        if head.id not in self.index.imports and head.id not in self.module_level_names:
            return None
        resolved = self.resolve(value)
        if resolved is None or resolved.split(".", 1)[0] in EXTERNAL_ROOTS:
            return None
        return resolved

    def _structures(self, node: ast.Call) -> tuple[tuple[str, str], ...]:
        """The list and tuple displays `node` passes that may hold a tensor
        (not only Python values), with the evidence of each element (see
        `CallSite.structures`)."""
        passed = [(str(i), arg) for i, arg in enumerate(node.args) if type(arg) in _DISPLAYS] + [
            (kw.arg, kw.value) for kw in node.keywords if kw.arg and type(kw.value) in _DISPLAYS
        ]
        if not passed:
            return ()  # most calls
        if any(isinstance(arg, ast.Starred) for arg in node.args):
            passed = [(where, value) for where, value in passed if not where.isdigit()]
        found = []
        for where, value in passed:
            if len(value.elts) > _STRUCTURE_SIZE:  # type: ignore[attr-defined]
                continue
            if any(isinstance(element, ast.Starred) for element in value.elts):
                continue
            elements = "".join(self._evidence(element) for element in value.elts)
            if elements.strip("p"):
                found.append((where, elements))
        return tuple(found)

    def _splat(self, mapping: ast.expr) -> str:
        """What `**mapping` fills parameters with: a dict display is read
        value by value elsewhere; a mapping read from an object's attribute
        or a name (`**self.config.kl`, `**kwargs`) is a Python value unless it
        is known to hold tensors."""
        evidence = self._evidence(mapping)
        return "?" if evidence in "ts" else "p"

    def _record_bound_call(
        self,
        callee: str,
        bound: list[ast.expr],
        keywords: list[ast.keyword],
        passed: str,
        lineno: int,
        via_attribute: bool,
    ) -> None:
        """The call a tracer makes of `functools.partial(callee, *bound,
        **keywords)`: the bound arguments, then what the tracer passes
        (`passed`, as evidence: `tt` for the labels and predictions Keras
        gives a loss)."""
        args = "".join(self._evidence(arg) for arg in bound) + passed
        given = tuple((kw.arg, self._evidence(kw.value)) for kw in keywords if kw.arg)
        caller = self.function_stack[-1].qualname if self.function_stack else ""
        self.index.call_sites.append(CallSite(callee, args, given, lineno, via_attribute, caller))
