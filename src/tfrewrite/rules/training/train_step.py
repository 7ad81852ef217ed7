"""TFR302: a custom train step driven from a Python loop runs eagerly."""

from __future__ import annotations

from collections.abc import Iterator

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.step_plans import decorated_step, undecorated_train_steps
from tfrewrite.facts.tf_function import decorator_source
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import CstFix, NodeEdit, Violation
from tfrewrite.rewrite.step_violation import StepViolation
from tfrewrite.rules.base import Invalid, Rule, Valid


class UndecoratedTrainStep(Rule):
    code = "TFR302"
    name = "undecorated-train-step"
    summary = (
        "A custom train step called from a Python loop runs eagerly: "
        "decorate it with `@tf.function`"
    )
    fix_applicability = Applicability.SAFE
    decorates_steps = True
    needs_traced_code = False
    explanation = """
        ## What it does
        Finds a train step that runs eagerly: a function that opens a
        `tf.GradientTape`, takes gradients and applies them (`apply_gradients`,
        `minimize`, Keras 3's `optimizer.apply`, a hand-written
        `w.assign_sub(lr * dw)`) or returns the gradients of a model's variables
        for the loop to apply (`return loss, tape.gradient(loss,
        model.trainable_variables)`), called once per batch from a Python loop
        (also from a script that imports no TensorFlow, such as an RL `main.py`
        calling `agent.learn()`), and not decorated with `@tf.function`.

        ## Why is this bad?
        Undecorated, the step runs eagerly: every op is dispatched from
        Python. With `@tf.function` the forward pass, gradients and update run as
        one graph; a small loop measured 31.21 ms per step eagerly and 3.14 ms
        traced, with identical results.

        ## How it fixes
        The fix adds `@tf.function`, taking over `jit_compile` and
        `reduce_retracing` from a `tf.function` on the loss the step
        differentiates (TFR301 removes that one), and adds
        `reduce_retracing=True` when the loop may feed a short final batch
        (`dataset.batch(n)` without `drop_remainder=True`, or
        `range(0, n, batch_size)` slicing), so the last batch does not trace a
        second graph for its shape; but not when the step, or a function it
        calls, reads the batch dimension statically (`x.shape[0]`,
        `tf.reshape(g, [g.shape[0], -1])`): relaxed, the trace holds `None`
        there and the shape cannot be built.

        Before the decorator goes on, the step and the functions it calls are
        checked as traced code in the same run, and everything that would
        change meaning under tracing is fixed together with the decorator:
        `print` becomes `tf.print`, `.numpy()`/`float()` on a tensor that only
        feeds TensorFlow the tensor itself, a Python `if` on a tensor a
        `tf.cond`, NumPy and `random` calls their TensorFlow forms. When one
        of them cannot be fixed (a module global updated per epoch is frozen,
        `logging` or `time` calls
        run once, `open`/`input`, a list outside the step appended to, a
        variable or metric created per call, a model or optimizer built again
        for the step, as a notebook section that starts over with `net =
        Net()` does: its variables would be created in a second trace, or the
        traced step would go on with the first one; Python iteration over a
        tensor, as `zip` over gradients `tf.math.l2_normalize` stacked into
        one tensor or `h, w = tf.shape(x)`, which tracing does not allow; a
        method of a plain Python object the step holds, such as a replay
        buffer's `self.memory.sample(32)` whose batch tracing would freeze,
        wherever the project defines its class; a Keras loop of its own run
        from the step, `target.predict(states)`, `model.fit(...)` or
        `evaluate`, which raises traced: call the model instead; Keras'
        `get_weights`/`set_weights`, which copy weights to and from NumPy
        arrays on the host (traced, `get_weights` raises); a step defined
        inside the loop that calls it, where each iteration would make a new
        `tf.function` that traces on every call; a NumPy
        array that is not float32, which the loop hands to the step and the
        step mixes with tensors in its own arithmetic, such as float64 labels
        `Y = np.array([...])` passed as `Y[i : i + 16]` to `y -
        model(x)`: eagerly the array takes the tensor's dtype, traced it
        arrives as a float64 tensor and `float64 - float32` raises; a
        learning-rate schedule of the project, built where the step is known
        (its module or one related to it by an import), whose `__call__`
        branches in Python on its step (`if step < self.warmup_steps:`) or
        calls Python's `math` on it: the optimizer calls it inside the
        traced step from Keras code AutoGraph does not convert, and it
        raises), the step is not decorated and
        the finding lists every blocker with its line. The blockers are not
        reported again as findings of their own: the step runs eagerly, and
        there they change nothing (a function the step calls that runs
        traced today, such as a Keras model's `call`, keeps its findings).
        The same holds across modules: a helper of another module the step
        calls is checked as traced code in its own file, a blocker there
        (a file it writes once) keeps the step eager and is named in the
        finding ("in `log_loss` (helpers.py:2): TFR202 ..."), and what only
        steps kept eager would trace is no finding in any file.
        A commented-out
        `# @tf.function` right above the step is a blocker too: its author
        turned tracing off on purpose.

        ## When it is not reported
        `Model.train_step` overrides that `fit` can call (`train_step(self,
        data)`) are left alone: Keras traces them; a model's own
        `train_step(self, batch, optimizers)` called by hand from a loop is a
        step like any other. A loop's `obj.train_step(...)` for an object
        whose class is not known stands for the method of the class the
        attribute holds (`self.net = Actor()`), or names (`self.actor`), or
        else for each of the few classes that define a training method of
        that name (a factory's alternatives). A method the loop calls that
        trains nothing itself but calls its class's steps (SAC's `train`
        calling `update_critic` and `update_actor`) runs each of them per
        batch: each is reported, and the message names the method between. Left alone too are
        a function whose tape sits in a loop of its own (a training loop:
        TFR303's case) and a method
        that learns from lists its class grows between calls (a REINFORCE
        update over the episode's `self.rewards`), or a function every caller
        hands a list its loop grows (`train_step(states, returns, ...)` after
        `states.append(s)` per step of the episode): each call has a new
        length, so traced it would trace again on every call.

        ## Fix safety
        The fix is safe when the decoration is proven: the loop's call is
        resolved to the step, and the step and everything it calls were
        checked as traced code, with every finding there fixed by a safe fix in
        the same run. The fix is unsafe (applied with `--unsafe-fixes`; the
        fix message says why) when one of those fixes is, or when it rests on
        what tfrewrite cannot see: a method of a held object whose class
        tfrewrite cannot see (a package's, not the project's) may be plain
        Python too; the loop's call is matched to the step by method name only;
        the step is a method a loop of another module calls (through a helper
        of its own class too), whose arguments are not checked here; its
        optimizer may call a learning-rate schedule of the project, which
        Keras runs in the trace without AutoGraph;
        the step is wrapped by a decorator whose wrapper is not known
        (`@timed`: `@tf.function` would trace it too); the file star-imports
        a module the project does not hold; the loop hands the step a NumPy
        array that is not float32 (`np.random.rand(16, 1)`, `np.zeros(n)`,
        `.astype("float64")`) and the step passes it on to what tfrewrite
        cannot see convert it (`loss_fn(y, pred)`): traced, float64 may meet
        the model's float32 and raise. An array the step hands only to a
        Keras model or a Keras `Loss` object keeps the fix safe: Keras
        casts it to float32 alike eagerly and traced; or the step unpacks
        what an object of unknown class returns (`loss, mse = loss_fn(y,
        pred)` for a `loss_fn` it is handed): a Keras loss object returns
        one tensor, which unpacks eagerly along its first axis but raises
        when traced. With a blocker there is no fix: the step stays eager.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            def train_step(model, optimizer, loss_fn, x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            def fit(model, optimizer, loss_fn, dataset):
                for x, y in dataset.batch(64):
                    train_step(model, optimizer, loss_fn, x, y)
            """,
            """
            import tensorflow as tf

            @tf.function(reduce_retracing=True)
            def train_step(model, optimizer, loss_fn, x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            def fit(model, optimizer, loss_fn, dataset):
                for x, y in dataset.batch(64):
                    train_step(model, optimizer, loss_fn, x, y)
            """,
            note="a short final batch: reduce_retracing=True",
        ),
        Invalid(
            """
            import tensorflow as tf

            def step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                print("loss", loss.numpy())
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            for x, y in batches:
                step(x, y)
            """,
            None,
            note="refused when the rules that fix print and .numpy() are not selected",
        ),
        Valid(
            """
            import tensorflow as tf

            class Net(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(y=y, y_pred=self(x, training=True))
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}
            """,
            note="Keras traces Model.train_step",
        ),
        Valid(
            """
            import tensorflow as tf

            @tf.function(jit_compile=True)
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            for x, y in batches:
                train_step(x, y)
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        for plan in undecorated_train_steps(ctx):
            name = plan.function.node.name.value
            message = (
                f"The train step `{name}` is called from a Python loop but runs eagerly, "
                "op by op: decorate it with `@tf.function`"
            )
            alias, _ = ctx.tensorflow()
            new_step, imports = decorated_step(ctx, plan)
            fix_message = f"Decorate `{name}` with `@{decorator_source(alias, plan.options)}`"
            applicability = Applicability.SAFE
            if plan.via:
                driver = plan.via.rpartition(".")[2]
                message += (
                    f" (through `{driver}` of its class, which calls it and which the loop "
                    "calls through an attribute, matched by method name)"
                )
            elif plan.by_method_name:
                message += " (the loop calls it through an attribute, matched by method name)"
            elif plan.looped_elsewhere:
                message += " (by a loop in another module)"
            if plan.unproven is not None:
                fix_message += f" (unsafe: {plan.unproven})"
                applicability = Applicability.UNSAFE
            yield StepViolation(
                plan.function.node.name,
                message,
                CstFix(
                    fix_message,
                    (NodeEdit(plan.function.node, new_step),),
                    imports,
                    applicability,
                ),
                steps=(plan.function.node,),
                blockers=tuple(plan.blockers),
            )


RULES = (UndecoratedTrainStep,)
