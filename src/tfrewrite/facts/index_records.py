"""Pass 1's records: what the index of one file holds (`ModuleIndex`) and
the functions, classes, traced sites, call sites and tape losses in it.

Plain dataclasses with type hints: the cache stores them as JSON field by
field (`workspace.json_codec`), worker processes return them, and every
file's index stays in memory for the whole run, so they hold names and
flags, never nodes. `index` fills them.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from tfrewrite.workspace.line_names import CellStarts

# The folder module names leave out: `src/pkg/m.py` is module `pkg.m`.
SOURCE_FOLDER = "src"


@dataclass(slots=True)
class FunctionInfo:
    """A function or method: its place, decorators and the calls it makes."""

    qualname: str  # "f", "Class.method", "outer.inner"
    lineno: int
    params: list[str]
    decorators: list[str]  # dotted names of decorators (the callee when called)
    decorator_keywords: dict[str, dict[str, str]]  # decorator -> keyword -> source
    calls: list[str]  # dotted names of what the body calls
    class_name: str | None = None
    # How many positional arguments a call must and may pass (a method's
    # `self` counted; `max_positional` is -1 with `*args`), and whether a
    # keyword-only parameter has no default: whether a framework calling
    # it as `train_step(data)` can be calling it at all.
    min_positional: int = 0
    max_positional: int = -1
    # How many of `params` come before `*args` or the keyword-only ones:
    # those a positional argument can bind.
    positional_count: int = 0
    requires_keywords: bool = False
    # Takes `**kwargs`: any keyword a caller passes binds (`training=True`).
    takes_any_keyword: bool = False
    opens_gradient_tape: bool = False
    applies_gradients: bool = False
    # Returns the gradients its tape computes, for its caller to apply
    # (`return loss, tape.gradient(loss, model.trainable_variables)`).
    returns_gradients: bool = False
    # Applies the gradients a helper of the file returns (`loss, grads =
    # self.grad(x, y)`, then `apply_gradients`): its tape is the helper's.
    applies_helper_gradients: bool = False
    # Hands a tape it opens to a call, with what it differentiates
    # (`self._descend(tape, total_loss)`): the helper takes the gradients
    # and applies them (`tape_losses`).
    hands_tape: bool = False
    # Hands an optimizer's `minimize` a callable that computes the loss
    # (`opt.minimize(loss, var_list)`): the optimizer's own tape
    # differentiates it and applies the gradients (`tape_losses`).
    minimizes_callable: bool = False
    # Every `return` gives a model's variables (`function_facts.
    # returns_variables`): `tape.gradient(loss, self.training_variables())`
    # differentiates with respect to a model's variables.
    returns_variables: bool = False
    # The parameters whose default is a tensor (`deterministic=tf.constant(
    # False)`), with its evidence (`s` a scalar, `t` a tensor): a call that
    # leaves one out passes that there.
    tensor_defaults: dict[str, str] = field(default_factory=dict)
    # The parameters whose default is a number or a bool (`augment=True`): a
    # tracer that fills the leading parameters (`ds.map(load)` over one
    # component) leaves them their Python value.
    number_defaults: AbstractSet[str] = frozenset()
    # The `self` attributes whose variables every `return` gives (`return
    # self._q1_model.trainable_variables`: "_q1_model"), a wrapper's property
    # a step differentiates with respect to (`tape_reach`).
    returns_variables_of: tuple[str, ...] = ()
    # What its tape blocks call, as `calls` names them, and what its
    # gradients are taken with respect to through held objects
    # ("_model.q1_variables"): `tape_reach`.
    tape_calls: tuple[str, ...] = ()
    tape_trains: tuple[str, ...] = ()
    # Calls Python logging (`vocabulary.is_logging_call`): `logging.info`,
    # `tf.get_logger().info`, a module-level `logger = logging.getLogger()`.
    calls_python_logging: bool = False
    # It has a `training` parameter and its body reads it (tests it, hands
    # it on): a Keras `call` taking `training` only to ignore it reads none.
    reads_training: bool = False
    # Its `training` parameter defaults to True (`def call(self, x,
    # training=True)`): Keras uses that default when neither the caller nor
    # a call context says otherwise, so its layer trains without the flag.
    trains_by_default: bool = False
    # A tape opened inside a loop of the function's own body: the function
    # is a training loop (TFR303's case), not a step.
    tape_in_loop: bool = False
    # The parameters the loops around its tapes iterate, when every such
    # loop iterates one (`for noise in noises`): what one call is handed,
    # a training loop only if the call sites hand it batches
    # (`ModuleIndex.per_call_tape_loops`). `tape_in_other_loop`: a tape in
    # any other loop (over a dataset it builds, a `range`).
    tape_loop_params: set[str] = field(default_factory=set)
    tape_in_other_loop: bool = False
    # What the function calls inside a `for` over data of its own body (not
    # a counted `range`): a helper returning gradients called there makes
    # the function a training loop, not a step.
    calls_in_data_loops: set[str] = field(default_factory=set)
    # It returns gradients, and every function of its file that calls it
    # leaves them unapplied: not a step that hands them to be applied.
    gradients_unapplied: bool = False
    # A method that iterates over, or turns whole into an array, a `self`
    # list that other methods of its class append to (a REINFORCE update over
    # the episode's `self.rewards`): each call sees a new length, so under
    # `tf.function` it would trace again on every call.
    consumes_grown_lists: bool = False
    # Body facts that let rules skip a file before it is parsed with LibCST.
    # An `if` or `while` statement, `a if c else b`, or an operand of
    # `and`/`or`/`not` whose truth Python tests, that may be a tensor
    # (`python_conditions`): what TFR101 and TFR109 look at.
    branches: bool = False
    # Parameters whose Python values keep the function's conditions Python
    # (`if training:`, `training=False`): it branches on a tensor after all
    # when the project proves one a tensor (`prefilters.python_names`).
    condition_params: frozenset[str] = frozenset()
    # Parameters given to a TensorFlow op as its shape or a count
    # (`tf.tile(c, (batch_size, 1))`: `shape_parameters`).
    shape_params: frozenset[str] = frozenset()
    # How the datasets it batches batch: "" (it batches none), "equal"
    # (every `.batch` drops the remainder), "any" (one may keep a short
    # last batch): a caller's loop over what it returns (`callee_facts`).
    batch_sizes: str = ""
    # Parameters averaged whole (`np.mean(values)`, `sum(values) /
    # len(values)`): a caller's list of per-batch values handed here is
    # averaged as if by the caller (`callee_facts`, TFR306).
    averaged_params: frozenset[str] = frozenset()
    # Repeats a list display by a count read from a static shape (`[start] *
    # x.shape[0]`): what TFR107 looks at.
    repeats_list: bool = False
    # Reads a static shape (`x.shape`, `x.get_shape()`): what it hands a
    # function of `ModuleIndex.callee_shape_params` may be a static dimension.
    reads_static_shape: bool = False
    # What TFR202 reports may be there: `obj.attr = ...` (not `self.attr =`,
    # how layers keep their parts), `self.n += ...`, `obj[k] = ...`,
    # `global`/`nonlocal` (`_writes_outside`).
    writes_state: bool = False
    # `self.<attr> = ...` in its own body: attributes it keeps on its object
    # (a traced method keeping a tensor there leaves a symbolic one, which
    # code outside that trace cannot read: `rules/python_state/kept_tensors`).
    assigned_self_attrs: set[str] = field(default_factory=set)
    # A mutating method called on what may not be the function's own
    # container (`history.append(x)`, `self.log.append(x)`), or on its own
    # in a loop that may run as a graph loop: what else TFR202 looks at.
    mutates_outside: bool = False
    # What TFR108 looks at: an unpacking assignment of a tensor, or a
    # tensor given to `zip`/`list`/... (`vocabulary.ITERATING`).
    iterates_tensor: bool = False
    # A `for` over what may be a tensor (`for i in count`, a helper's or an
    # op's result, `range` of what may be one; not a parameter, an
    # attribute, another Python builtin's result): what TFR108 looks at.
    loops_over_value: bool = False
    # Name sets filled while indexing, then frozen (`_compact`).
    method_calls: AbstractSet[str] = field(default_factory=set)  # `.numpy()`, `.append()`
    self_writes: AbstractSet[str] = field(default_factory=set)  # `self.x = ...`, `+=`: "x"
    # `self.x[k] = v`, `self.x.append(v)`, `self.x[k].append(v)`: "x"
    self_item_writes: AbstractSet[str] = field(default_factory=set)
    # Of both, those written on every call: not only under an `if` that
    # tests them unset (`if not self.x: self.x.extend(...)`, set up once).
    self_changes: AbstractSet[str] = field(default_factory=set)
    self_reads: AbstractSet[str] = field(default_factory=set)  # `self.x` read: "x"
    # Methods of objects the class holds, or a parameter holds, whose
    # results the body uses (`y = self.aug.flip(x)`, `loss_obj.losses(...)`,
    # not a bare `self.tracker.add(x)`), as called:
    # such a method computes part of what the function returns or traces.
    held_results: AbstractSet[str] = field(default_factory=set)
    # Local names bound to an attribute of an object the function (or one
    # around it) builds: `enc = parts.encoder` for `parts = Parts()` ->
    # "pkg.Parts.encoder". Whether that attribute holds a model is a project
    # fact (`ModuleIndex.held_models`).
    attribute_aliases: dict[str, str] = field(default_factory=dict)
    # Its lines, decorators included: what a pruned check blanks out when
    # no rule can need it (`relevant_code`). 0 when unknown.
    first_lineno: int = 0
    end_lineno: int = 0
    # Functions it returns: nested ones by name (a loss factory's `return
    # content_loss`, local qualnames), and project functions it names or
    # picks from a table (`return losses[name]`, dotted as the module names
    # them). What its callers bind the result to, and call, is one of these
    # (`ImportResolution.resolve`, `ProjectLookup.find` of `maker()`).
    returns: list[str] = field(default_factory=list)
    # Every `return` gives what a TensorFlow op computes (`function_facts.
    # returns_tensor`): a caller of another module gets a tensor from it.
    returns_tensor: bool = False
    # Builds a Keras layer with `dropout=`/`recurrent_dropout=` (or keyword
    # arguments it cannot see, `**kwargs`): a recurrent layer that then
    # reads `training`.
    builds_rnn_dropout: bool = False
    # Every `return` gives what a TensorFlow op or an operator computes (a
    # number or a tensor), or a function defined in it (a custom gradient's
    # `grad`): never a layer or a model.
    returns_computed: bool = False
    # Every `return` gives a Keras model it builds (`function_facts.
    # returns_model`): what a caller binds its result to is a model.
    returns_model: bool = False
    # Otherwise, when every `return` gives what calls return: those callees
    # (`return actor, critic` of `get_actor(...)`, `get_critic(...)`), which
    # the project facts judge as model builders or not.
    returned_builder_calls: tuple[str, ...] = ()
    # Of those, per position of the tuple every `return` gives, the callee
    # whose result stands there (`function_facts.returned_parts`).
    returned_parts: tuple[str, ...] = ()
    # Of such a builder: whether Keras' own layers it builds may compute
    # otherwise with `training=True`, and the project functions and classes
    # it calls, whose layers decide the rest (`training_layer_reads`).
    model_reads_training: bool = True
    model_parts: tuple[str, ...] = ()
    # A block function (not a builder) that builds Keras layers on its
    # inputs and returns what they compute (`g_block(x, w, noise, filters)`):
    # `model_reads_training` and `model_parts` say the same of its layers.
    builds_layers: bool = False
    # The functions whose results it returns as its own (`return
    # self.ll(...)`), as pass 1 names them: differentiating it
    # differentiates them.
    returned_calls: list[str] = field(default_factory=list)
    # Loop variables over a `self` list (`for block in self.blocks`): name
    # -> the attribute ("" for a name that also takes other values); None
    # when it has none (`index_lists`).
    loop_attributes: dict[str, str] | None = None

    @property
    def caller_params(self) -> list[str]:
        """The parameters a call's arguments fill, in order: a method's
        without its `self`/`cls`."""
        params = self.params
        if self.class_name and params and params[0] in ("self", "cls"):
            return params[1:]
        return params

    def default_evidence(self, name: str) -> str:
        """What a call that leaves the parameter `name` out passes there, as
        call evidence: its default, a Python value unless `tensor_defaults`
        says it is a tensor."""
        return self.tensor_defaults.get(name, "p")

    @property
    def trains(self) -> bool:
        """A custom train step: it opens a `GradientTape`, and applies the
        gradients or hands them to its caller to apply; or it applies those
        a helper's tape computes and returns, or hands its tape to a helper
        that does; or it hands an optimizer's `minimize` the loss to
        differentiate. The forward and backward pass of one batch run here:
        decorating it is the speed-up."""
        if self.applies_helper_gradients or self.minimizes_callable:
            return True
        return self.opens_gradient_tape and (
            self.applies_gradients or self.hands_gradients_back or self.hands_tape
        )

    @property
    def hands_gradients_back(self) -> bool:
        """It returns the gradients its tape computes, and its callers apply
        them (`grads = compute_gradients(x); optimizer.apply_gradients(...)`):
        its tape is a train step's."""
        return self.returns_gradients and not self.gradients_unapplied


@dataclass(slots=True)
class ClassInfo:
    qualname: str
    lineno: int
    bases: list[str]
    methods: list[str]
    # `self.<attr> += ...` in a method: attr -> the first such method. An
    # object of this class held by another (`self.memory = ReplayBuffer()`)
    # carries Python state that changes between calls (`memory.mem_cntr`).
    updated_attrs: dict[str, str] = field(default_factory=dict)
    # `self.<attr> = Cls(...)`: attr -> dotted name of the callee, the class
    # of the object held when it is one of the project's.
    held_objects: dict[str, str] = field(default_factory=dict)
    # `self.<attr> = f` (a function, not called): attr -> dotted names of
    # the functions its methods bind there. `self.<attr>(...)` in a method
    # of the class, a base or a subclass calls one of them.
    held_functions: dict[str, list[str]] = field(default_factory=dict)
    # `self.<attr> = <param>` in `__init__`: attr -> the parameter. What it
    # holds is what every call site that builds the class passes there,
    # when that is an object of one project class, whatever the parameter's
    # annotation says (`ProjectLookup.held_attributes`, from
    # `ModuleIndex.param_classes`).
    held_parameters: dict[str, str] = field(default_factory=dict)
    # `self.__dict__.update(kwargs)` in `__init__` (`index._absorbs_keywords`):
    # each keyword argument a builder passes is kept in the attribute of
    # its name, as if `self.<keyword> = <keyword>`.
    absorbs_keywords: bool = False
    # `self.<attr>` lists its methods fill: attr -> whether every element is
    # an object the class builds where it fills them (`index_lists`):
    # calling one runs what those constructor calls built.
    built_lists: dict[str, bool] = field(default_factory=dict)
    # Attributes every assignment of which makes a tensor or a variable in
    # `__init__` or `build` (`set_up_tensors`): whole static shapes.
    set_up_tensors: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class HandedCallable:
    """A function handed by keyword to a call (`ds.create(map_fn=lambda items:
    parse(items))`, `build(loss_fn=mse)`): a parameter of the callee that
    the callee hands a tracer (`ds.map(map_fn)`) traces the functions it
    runs. Matched by the callee's name and the keyword (its object's class
    is often unknown: `AudioSet(...).create(...)`)."""

    method: str  # the last name of the callee: `create`
    keyword: str  # `map_fn`, or `#1` for the second positional argument
    functions: tuple[str, ...]  # what runs, as the module resolves it: `parse`
    through_lambda: bool  # a lambda calling them: its arguments decide theirs
    lineno: int


@dataclass(slots=True)
class TracedSite:
    """A place where a function is handed to something that traces it."""

    target: str  # dotted name of the function or class
    reason: str
    lineno: int
    keywords: dict[str, str] = field(default_factory=dict)  # `tf.function(f, jit_compile=True)`
    # What the tracer passes to the function's positional parameters: "tensor"
    # (`Dataset.map`, `tf.map_fn`: every one is a tensor), "first" (a Keras
    # `Lambda` layer: its inputs), "likely" (`strategy.run(f, args=...)`), "".
    arguments: str = ""
    # The qualname of the function the site is in ("" at module level): a
    # target on one of its parameters (`tf.function(model.train_step)`) is
    # a method of the objects its callers pass.
    caller: str = ""


@dataclass(slots=True)
class TracedLambda:
    """A lambda handed to something that traces it (`compile(loss=lambda
    y_true, y_pred: ...)`, `ds.map(lambda x: ...)`, `keras.layers.Lambda`,
    `tf.map_fn`, `strategy.run`). Pass 2 finds its node by `source`, the
    lambda as `ast.unparse` writes it."""

    source: str
    reason: str
    lineno: int
    arguments: str  # as `TracedSite.arguments`; "loss" a compiled loss, "pair" a metric
    conditional: bool = False  # holds `a if c else b`: what TFR101 looks at in a lambda


@dataclass(slots=True)
class CallSite:
    """A call of a plain or `self.` function, with what each argument is:
    per positional argument and per keyword one of `t` (a tensor), `s` (a
    scalar tensor), `p` (a Python value: a literal, a display, a Python loop
    counter) or `?` (unknown). Traced functions learn from these how they are
    called."""

    callee: str
    args: str
    keywords: tuple[tuple[str, str], ...]
    lineno: int
    via_attribute: bool  # `self.step(...)`: the callee's first parameter is bound
    # The qualname of the function the call is in ("" at module level): a
    # plain name may call a function nested there (`_nms(class_id)`).
    caller: str = ""
    # Arguments that are parameters of the caller, or of a function around
    # it (a closure's), never rebound there: (position as a decimal string,
    # or keyword; the parameter; the qualname of the function it is of).
    # What they are is what the project knows that function receives there
    # (`call(self, x, step)` passing `step` on to `scaled_noise(h, step)`).
    forwarded: tuple[tuple[str, str, str], ...] = ()
    # Arguments that are list or tuple displays of more than Python values
    # (`self.mask([y, n_c])`): (position as a decimal string, or keyword; the
    # evidence of each element, as `args` gives it per argument). Unpacking
    # the parameter (`y, n_c = inputs`) gives those elements.
    structures: tuple[tuple[str, str], ...] = ()
    # Arguments that are names bound to an object a call built (`loss_obj =
    # losses.Losses()`, then `train_step(model, loss_obj)`): (position as a
    # decimal string, or keyword; what built it, as the caller names it).
    objects: tuple[tuple[str, str], ...] = ()
    # Arguments that name a definition or an import of the module, passed as
    # a value (`train_and_eval(cfg, model_cls=Model)`): (position as a
    # decimal string, or keyword; the name resolved). A class passed so is
    # what the callee builds its objects from (`model = model_cls(...)`).
    named: tuple[tuple[str, str], ...] = ()
    # Arguments that pass a tensor the calling class made at set-up
    # (`spectral_norm(self.w)`, `set_up_tensors`): position as a decimal
    # string, or keyword. Their static shape is whole.
    whole_shapes: tuple[str, ...] = ()
    # Arguments that pass a dataset batched without `drop_remainder=True`
    # (or a loop source feeding such batches): position or keyword. A
    # function looping over the parameter sees a short last batch (TFR306).
    short_batches: tuple[str, ...] = ()
    # The callee as the call writes it (`agent.update`), for pass 2 to find
    # the call again without positions.
    written: str = ""
    # Arguments that pass a list a loop of the caller appends to (the
    # states of an episode): position or keyword. A `tf.function` given
    # one traces again for every new length.
    grown_lists: tuple[str, ...] = ()
    # Arguments that are names bound to `ds.apply(f)` for an `f` the module
    # does not define (`input_pipeline.prepare`): (position or keyword; `f`
    # as the caller names it). When `f` batches keeping the remainder, the
    # argument feeds a short last batch, as `short_batches` do.
    applied_batchers: tuple[tuple[str, str], ...] = ()
    # Arguments that name what an enclosing `for` of the caller binds (an
    # element of what it iterates: `for image, noises in data:` then
    # `train_step(..., noises)`): position or keyword.
    loop_elements: tuple[str, ...] = ()


@dataclass(slots=True)
class TapeLoss:
    """A call `loss = f(...)` inside a `GradientTape` block whose result is
    differentiated (`tape.gradient(loss, ...)`): `f` is a loss, whatever it
    takes. `pair`: called as `f(labels, predictions)`, two positional
    arguments, which are then tensors."""

    callee: str  # dotted name of `f`
    function: str  # qualname of the enclosing function, "" at module level
    lineno: int
    pair: bool = True


@dataclass
class ModuleIndex:
    path: str
    module: str
    # A notebook's cells in its Python view: how its lines are named.
    cell_starts: CellStarts = ()
    imports: dict[str, str] = field(default_factory=dict)
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    traced_sites: list[TracedSite] = field(default_factory=list)
    handed_callables: list[HandedCallable] = field(default_factory=list)
    traced_lambdas: list[TracedLambda] = field(default_factory=list)
    # Calls `tf.config.run_functions_eagerly`, or `compile(run_eagerly=True)`:
    # what TFR307 looks at.
    switches_tracing_off: bool = False
    # Python handed to `tf.py_function` / `tf.numpy_function` runs eagerly
    # (`eager_callables`): the local qualnames of such functions, and the
    # spans (first line, column, last line, end column) of such lambdas.
    eager_functions: set[str] = field(default_factory=set)
    eager_spans: list[tuple[int, int, int, int]] = field(default_factory=list)
    # Functions of this module handed to a Keras layer as a weight's
    # constraint or regularizer (`Dense(8, kernel_constraint=symmetric)`):
    # Keras calls them with the weight variable, whose shape is known.
    weight_functions: set[str] = field(default_factory=set)
    # `model.compile(...)` on an object of a known class (`model = Net()`,
    # or `self.compile` in a method of `Net`): the class as this module
    # names it, and whether the call passes `run_eagerly=True`.
    compiled_objects: list[tuple[str, bool]] = field(default_factory=list)
    # Calls of a Keras method that traces a model's `call` with shapes Keras
    # chooses (`fit`, `predict`, `compile`, `build`, `save`): the class of the
    # object as the module names it (`model = Net()`), "" when unknown.
    keras_runs: list[str] = field(default_factory=list)
    # Training-loop facts (TFR3xx rules test these before parsing a file).
    opens_gradient_tape: bool = False  # anywhere, module level included
    # A `+=` inside a loop (`total += acc`): a running sum TFR306 may read.
    accumulates_in_loop: bool = False
    called_names: set[str] = field(default_factory=set)  # every resolved callee
    # Callees named in the default arguments or annotations of a function:
    # evaluated when its `def` runs (traced, for a function nested in a
    # traced one), yet in no function's `calls` nor in `called_names`.
    default_calls: set[str] = field(default_factory=set)
    # TFR306's candidates: averaging functions (`_AVERAGES`) given one
    # argument that is a name or a comprehension (`np.mean(losses)`), and
    # whether some `sum(...)` is divided.
    averaged_callees: set[str] = field(default_factory=set)
    divides_sum: bool = False
    # A name both augmented with `+=` and divided (`total / n_batches`):
    # a running sum TFR306 may read.
    divides_running_sum: bool = False
    # A mean kept up to date pass by pass: `avg = (avg * i + v) / (i + 1)`.
    updates_running_mean: bool = False
    tape_losses: list[TapeLoss] = field(default_factory=list)
    # Callee -> whether a loop calling it may feed a short final batch.
    loop_calls: dict[str, bool] = field(default_factory=dict)
    # Per function ("" for module level), the names of the methods its
    # loops call on objects (`agent.remember(...)`, `agent.train()`): what
    # runs between the calls of what else such a loop calls.
    loop_methods: dict[str, set[str]] = field(default_factory=dict)
    # Filled by `compute_facts`: local qualname -> called from a loop in some
    # module (value: that loop may feed a short final batch).
    looped_functions: dict[str, bool] = field(default_factory=dict)
    # Filled by `compute_facts`: the looped methods a loop's `obj.name(...)`
    # reaches by the method's name alone (`method_steps`), not by its class,
    # with the qualname of the method of their class that the loop calls and
    # that calls them ("" when the loop calls the step itself).
    matched_by_name: dict[str, str] = field(default_factory=dict)
    # Filled by `compute_facts`: the names of this module's methods that a
    # Python loop of the project calls through an attribute (`maml.
    # train_on_batch(...)` in `train.py`), with whether that loop may feed a
    # short final batch. A fix round re-indexing the module alone keeps
    # them: a method it turns into a train step (its inline tape loop
    # extracted) is then known to be looped (`method_steps`).
    loop_method_names: dict[str, bool] = field(default_factory=dict)
    # Filled by `compute_facts`: callee (as this module names it) -> keyword
    # arguments of the `@tf.function` on that loss, wherever it is defined.
    loss_decorator_options: dict[str, dict[str, str]] = field(default_factory=dict)
    # Filled by `compute_facts`: the project's own learning-rate schedules
    # built in this module or in one related to it by an import: (path, class
    # qualname, line of `__call__`, what in it fails traced, or ""). An
    # optimizer calls its schedule inside the step it applies gradients in,
    # from Keras code AutoGraph does not convert.
    custom_schedules: list[tuple[str, str, int, str]] = field(default_factory=list)
    # Filled by `compute_facts`: this module's Keras 3 layers and models that
    # neither they nor their project bases give a `build` method: Keras
    # builds them by running `call` on symbolic inputs (TFR308).
    built_by_running_call: set[str] = field(default_factory=set)
    # Filled by `compute_facts`: the project's layer classes, of any module
    # (qualified), whose objects create weights: deriving from a Keras layer
    # that does (`Dense`), adding their own (`self.add_weight`), or holding a
    # sublayer that does (TFR308 follows a sublayer into another module).
    weighted_classes: frozenset[str] = frozenset()
    # Calls of project-looking functions with the evidence of their arguments.
    call_sites: list[CallSite] = field(default_factory=list)
    # `module.NAME = ...` written through an import: rebinds another module's name.
    foreign_writes: set[str] = field(default_factory=set)
    # `config.SCALE` for every read of a name through an imported module
    # (resolved): what `compute_facts` needs to know of rebound imports.
    module_attribute_reads: set[str] = field(default_factory=set)
    # The name of every attribute the module reads (`x.att_context`,
    # `self.cache`): an attribute it only assigns is kept for other code.
    attribute_reads: set[str] = field(default_factory=set)
    # `X` of every `X.attr = ...` / `X.attr += ...` on a plain name but `self`
    # and `cls` (`Schedule.margin = epoch / 10`): a class attribute rebound.
    named_attribute_writes: set[str] = field(default_factory=set)
    # Attributes a Keras callback of this module sets on the model it is
    # given (`self.model.schedule = ...` in `on_epoch_begin`): attribute ->
    # "Callback.method". Filled for every module by `compute_facts` with the
    # project's (`callback_model_writes`).
    model_writes: dict[str, str] = field(default_factory=dict)
    callback_model_writes: dict[str, str] = field(default_factory=dict)
    # Names whose items some statement assigns (`CONFIG["margin"] = ...`), and
    # names bound at module level: together, module containers changed in place.
    item_writes: set[str] = field(default_factory=set)
    module_names: set[str] = field(default_factory=set)
    # Filled by `compute_facts`: `Class.attr` of an object held in `self.attr`
    # -> its attributes that the held object's class updates in place
    # (`Agent.memory` -> {`mem_cntr`: "updated in place in `store_transition`"}).
    held_state: dict[str, dict[str, str]] = field(default_factory=dict)
    # Filled by `compute_facts`: `Class.attr` of an object held in `self.attr`
    # whose class the project defines -> "python" for a plain Python class
    # (a replay buffer: its methods run once when traced), "framework" for
    # one deriving from anything else (a `tf.Module`), or, for a Keras layer
    # or model, `project.KERAS_CLASS` / `KERAS_CLASS_IGNORING_TRAINING`.
    held_classes: dict[str, str] = field(default_factory=dict)
    # Filled by `compute_facts`: the `FunctionInfo.attribute_aliases` of this
    # module that name an attribute in which its class (of any module) keeps
    # a Keras model: built by a builder that returns one (`self.encoder =
    # self.make_encoder()`), by Keras (`Sequential(...)`), or of a Keras
    # model class of the project.
    held_models: set[str] = field(default_factory=set)
    # Filled by `compute_facts`: per function, `param.attr` where every call
    # site passes the parameter an object of a project class (any module:
    # `param_classes`) that keeps a Keras model in `self.attr` (`agent.critic`
    # for `train(agent, ...)` given `Agent()`, whose `__init__` builds
    # `self.actor, self.critic = build_models(...)`) -> whether that model
    # may compute otherwise with `training=True`. The parameter alone
    # (`model`) when every call site passes a Keras model itself (`self.pi`).
    parameter_models: dict[str, dict[str, bool]] = field(default_factory=dict)
    # Functions with tapes in loops over what each call hands them, every
    # call site handing an element of its own loop
    # (`FunctionInfo.tape_loop_params`): steps, not training loops.
    per_call_tape_loops: set[str] = field(default_factory=set)
    # Filled by `compute_facts`: for a Keras class of the project of another
    # module that this module calls (`net = Net(...)`), where `training`
    # stands among the positional arguments of a call of its objects (`self`
    # left out), or None when no positional argument binds it
    # (`call(self, x, h, c, mode)`; `call(self, x, *args, training=False)`).
    class_training_positions: dict[str, int | None] = field(default_factory=dict)
    # `parse = Targets()`, the only binding of `parse` at module level: the
    # name -> the constructor, as the module resolves it (`targets.Targets`).
    # A call `parse(...)` runs the class's `__call__`.
    module_instances: dict[str, str] = field(default_factory=dict)
    # `agent.noise = noise * decay` in a loop, on a name bound to an object
    # (`agent = Agent(...)`): (its constructor, as the module resolves it,
    # the attribute, the line).
    object_attribute_writes: list[tuple[str, str, int]] = field(default_factory=list)
    # Attributes of the objects of a class of this module that code
    # elsewhere rebinds in a loop (`object_attribute_writes` of any module):
    # class qualname -> attribute -> "rebound in `path:line`". Filled by the
    # project facts.
    outside_attribute_writes: dict[str, dict[str, str]] = field(default_factory=dict)
    # Plain `tf.function`s of other modules (no `input_signature`) this
    # module calls: the callee as written (`agent.update`) -> the function's
    # qualname there. Filled by the project facts; TFR203 asks.
    foreign_tf_functions: dict[str, str] = field(default_factory=dict)
    # A module-scope name that several statements bind to objects (`if`/`else`
    # alternatives) -> every constructor it may have been built with: a call
    # of it may run any of their `__call__`s.
    module_object_choices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Filled by `compute_facts`: constructors the module's functions call,
    # or its module instances were built with, that name a class the project
    # defines (as the module resolves them) -> "python" for a plain Python
    # class, "framework" for one deriving from anything else, a Keras kind
    # for a Keras layer or model (`project.KERAS_CLASS`: it takes
    # `training`; `KERAS_CLASS_IGNORING_TRAINING`: which changes nothing it
    # computes). Module-level calls count too (`net = TextNet()` under
    # `if __name__ == "__main__":`). Building a plain class's object, or
    # calling one, runs Python code that tracing runs once.
    called_classes: dict[str, str] = field(default_factory=dict)
    # Filled by `compute_facts`: project functions the module calls (as it
    # resolves them), of any module, that build and return a Keras model
    # (`d = IntrospectiveDiscriminator()`, `from models import ...`), and
    # whether that model may compute otherwise with `training=True`.
    model_builders: dict[str, bool] = field(default_factory=dict)  # -> model_reads_training
    # Filled by `compute_facts`: project functions the module's functions
    # call (as the module resolves them) that give parameters to a
    # TensorFlow op as its shape or a count -> (their parameters in order,
    # those parameters): `shape_parameters`.
    callee_shape_params: dict[str, tuple[tuple[str, ...], frozenset[str]]] = field(
        default_factory=dict
    )
    # Filled by `compute_facts`: the same for parameters the function
    # averages whole (`Metric.from_list(losses)` doing `np.mean(l)`).
    # Filled by `compute_facts`: project functions (and methods of held
    # objects) this module calls, as it calls them, every `return` of which
    # gives a tensor (`FunctionInfo.returns_tensor`).
    callee_tensor_results: set[str] = field(default_factory=set)
    # Filled by `compute_facts`: per function of this module, the parameters
    # every call site fills with an object of a project class -> the classes
    # those objects are of (`train_step(..., loss_obj)` with `loss_obj =
    # Losses()`; two scripts each passing their own `Model`).
    param_classes: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    # Filled by `compute_facts`: per function of this module, the parameters
    # every call site fills with a project class itself (not an object of
    # it) -> those classes, qualified (`RPN(n, VGG)` for `def __init__(self,
    # n, backbone)`): what `backbone(...)` there builds.
    param_class_types: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    # Filled by `compute_facts`: per traced function of this module, the
    # calls (as pass 1 names them) of a method of a plain Python object it
    # holds, made for their effect (`self.schedule.step()`), whose methods
    # set attributes of that object -> the method (`Schedule.step`) and the
    # attributes: what runs once, while tracing (TFR202).
    plain_effect_calls: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = field(
        default_factory=dict
    )
    # Filled by `compute_facts`: the Keras classes of the project this
    # module builds (as `called_classes` names them) whose `call` defaults
    # `training` to True (`FunctionInfo.trains_by_default`).
    classes_training_by_default: set[str] = field(default_factory=set)
    # The same for project functions every call site passes by name
    # (`Trainer(model, loss_fn=dice)`): what `self.loss_fn(...)` runs.
    param_functions: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    # The same for objects project functions build (`train_step(actor)` with
    # `actor = get_actor(...)`, or `actor, critic = get_model(...)`): the
    # functions that built them, whose models the project facts judge
    # (`keras_classes.record_held_models`).
    param_builders: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    # The same for datasets batched without `drop_remainder=True`: function
    # -> the parameters every call site fills with one (`evaluate(model,
    # test_ds)` with `test_ds = ds.batch(32)`).
    short_batch_params: dict[str, frozenset[str]] = field(default_factory=dict)
    # The same for tensors the calling class made at set-up (`CallSite.
    # whole_shapes`: `spectral_norm(self.w)`): their static shape is whole.
    whole_shape_params: dict[str, frozenset[str]] = field(default_factory=dict)
    callee_averaged_params: dict[str, tuple[tuple[str, ...], frozenset[str]]] = field(
        default_factory=dict
    )
    # Filled by `compute_facts`: project functions the module calls whose
    # every batching drops the remainder: the datasets they return batch
    # to one size (`load_dataset(...)` of another module).
    callee_equal_batches: set[str] = field(default_factory=set)
    # Filled by `compute_facts`: the project functions this module calls
    # (as it names them) that batch some dataset keeping the remainder.
    callee_short_batches: set[str] = field(default_factory=set)
    # Filled by `compute_facts`: a train step TFR302 would decorate -> the
    # functions of other modules it reaches that read a tensor's value on
    # the host (`host_reads.record_host_reads_reached`).
    host_reads_reached: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Modules imported with `from module import *`: their names may be used bare.
    star_imports: list[str] = field(default_factory=list)
    # What the module's own top-level `from ... import name` statements bind
    # (alias -> target), outside any `if`/`try`: names it hands on to its
    # importers for certain (`from ._penalty import gradient_penalty` in a
    # package's `__init__`), unlike a choice among alternatives (one backend).
    reexported: dict[str, str] = field(default_factory=dict)
    # The modules its top-level `from m import *` statements name: their
    # names it hands on for certain (see `reexported`).
    reexported_stars: list[str] = field(default_factory=list)
    # Filled by `compute_facts`: what those names are, for star-imported
    # modules of the project (`np` -> `numpy` when `utils` imports NumPy
    # as `np`; `ReplayBuffer` -> `pkg.buffer.ReplayBuffer`), and the
    # star-imported modules the project does not hold (their names are unknown).
    star_names: dict[str, str] = field(default_factory=dict)
    unseen_star_imports: list[str] = field(default_factory=list)
    # Every identifier the file spells (`index_names.identifiers`): what a
    # fix must not name a function or list it adds (`training.fresh_name`).
    used_names: frozenset[str] = frozenset()
    # Filled by `compute_facts`: `config.SCALE` -> how the project rebinds it,
    # for a name of a project module this one imports whole, rebound after
    # import (in a function, or by another module): read through the module
    # in traced code, it is frozen state.
    rebound_imports: dict[str, str] = field(default_factory=dict)
    # Module-level names bound more than once only by plain module-level
    # statements (no loop, no function): name -> line of the last binding.
    straight_rebinds: dict[str, int] = field(default_factory=dict)
    # Callee -> lines of the module-level calls of it (outside any function).
    module_call_lines: dict[str, list[int]] = field(default_factory=dict)
    # Module-level `GradientTape` blocks in a loop (TFR303 extracts them
    # into a step): line of the `with` -> the project-looking callees called
    # inside it (`net(x)` on a module-level `net = Net()` as `pkg.Net()`).
    # What they reach runs traced once the step is extracted.
    tape_block_calls: dict[int, list[str]] = field(default_factory=dict)
    # Functions used as values, not called here: dotted name -> where to
    # ("handed to `LossFunctionWrapper` at line 30", "returned by `make_loss`
    # at line 12", "bound to `self.loss_fn` at line 8"). What receives one
    # runs it: a loss handed to a Keras wrapper runs in `fit`'s step.
    value_references: dict[str, str] = field(default_factory=dict)
    # Module-level names bound more than once, or declared `global` somewhere:
    # mutable module state (TFR201 looks only when there is some).
    # name -> how (`rebound in `f``, `assigned more than once`), for messages.
    rebound_module_names: dict[str, str] = field(default_factory=dict)
    syntax_error: tuple[int | None, int | None, str] | None = None
    # Set on a copy in a pruned check (`relevant_code.Pruned`): what was left
    # out of the parsed code, for the index of a simulated fix round.
    pruned: Any = None

    def derives_from_keras(self, qualname: str, leaves: AbstractSet[str] | None = None) -> bool:
        """Whether the class `qualname` of this module derives, through
        classes of this module, from a Keras class (one whose name is among
        `leaves` when given: `Layer`, `Model`). Bases from other modules
        are not followed."""
        from tfrewrite.facts.keras_names import keras_leaf

        seen: set[str] = set()
        todo = [qualname]
        while todo:
            current = todo.pop()
            info = self.classes.get(current)
            if info is None or current in seen:
                continue
            seen.add(current)
            for base in info.bases:
                leaf = keras_leaf(base)
                if leaf is not None and (leaves is None or leaf in leaves):
                    return True
                todo.append(self.local(base))
        return False

    def qualify(self, local_qualname: str) -> str:
        return f"{self.module}.{local_qualname}" if self.module else local_qualname

    def function_named(self, name: str, within: str) -> str | None:
        """The function of this file that a bare `name` read in the function
        `within` (a local qualname, "" at module level) names: one nested in
        it or in a function around it, innermost first (a class body in
        between is no scope the name reaches), else a module-level one."""
        parts = within.split(".") if within else []
        for depth in range(len(parts), 0, -1):
            scope = ".".join(parts[:depth])
            if scope in self.functions and f"{scope}.{name}" in self.functions:
                return f"{scope}.{name}"
        return name if name in self.functions else None

    def local(self, qualified: str) -> str:
        """`qualify`'s inverse: a name of this module without the module
        (`pkg.models.Net.call` -> `Net.call`); any other name as it is."""
        return qualified.removeprefix(f"{self.module}.") if self.module else qualified

    def held_by(self, callee: str) -> list[str]:
        """The functions a call `callee` naming a class attribute of this
        module (`module.Trainer.loss_fn`, from `self.loss_fn(...)`) runs when
        the class binds functions there (`self.loss_fn = dice_loss`)."""
        owner, _, attr = self.local(callee).rpartition(".")
        info = self.classes.get(owner)
        return list(info.held_functions.get(attr, ())) if info is not None else []

    def method_around(self, qualname: str) -> FunctionInfo | None:
        """The method a function is, or is nested in (`Trainer.fit` for
        `Trainer.fit.train_step`): the one whose `self` a closure's
        `self.loss_fn(...)` reads. None outside classes."""
        parts = qualname.split(".")
        for n in range(len(parts), 0, -1):
            info = self.functions.get(".".join(parts[:n]))
            if info is not None and info.class_name:
                return info
        return None

    def own_method_called(self, qualname: str, callee: str) -> str | None:
        """`self.calc_loss` called in a method of `Agent` (or in a function
        nested in one, which reads the method's `self`): `Agent.calc_loss`,
        the class's method by its name in this module. None for a callee
        not on `self`, or outside classes."""
        owner = self.method_around(qualname)
        method = callee.removeprefix("self.")
        if owner is None or method == callee or "." in method:
            return None
        return f"{owner.class_name}.{method}"

    def is_training_loop(self, qualname: str) -> bool:
        """Whether a function is a training loop (TFR303's case, not a
        step): a tape in a loop of its own body, unless every such loop
        iterates what each call hands it and every call site hands an
        element of its own loop (`per_call_tape_loops`: three generator
        updates over the `noises` of one batch)."""
        info = self.functions.get(qualname)
        return info is not None and info.tape_in_loop and qualname not in self.per_call_tape_loops

    def innermost_function(self, line: int) -> str | None:
        """The qualname of the innermost function around `line`, by pass 1's
        lines (no positions of a parsed tree needed); None outside any."""
        around = [
            (info.end_lineno - info.first_lineno, qualname)
            for qualname, info in self.functions.items()
            if info.first_lineno <= line <= info.end_lineno
        ]
        return min(around)[1] if around else None

    def runs_eagerly(self, qualname: str) -> bool:
        """Whether a function is, or is nested in, one that runs eagerly
        (`eager_functions`: handed to `tf.py_function`, or called only by
        such a function)."""
        return any(
            qualname == eager or qualname.startswith(f"{eager}.") for eager in self.eager_functions
        )
