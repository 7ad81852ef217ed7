"""TFR306: where the averaged batches come from, and the running sum divided
by the number of batches whatever the spelling.

A loop over a dataset built by a helper of the file batches with what the
call binds the helper's parameters to (its arguments, else the defaults);
`total /= n_batches` after the loop averages as `total / n_batches` does."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from tests.projects import check_project, found_lines

from tfrewrite.api import check_source
from tfrewrite.facts.call_arguments import bind_arguments
from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.rules import RULES_BY_CODE


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def _lines(source: str) -> list[int]:
    return [f.start.line for f in check_source(_d(source), select=["TFR306"])]


def _lines_below_prefilter(source: str) -> list[int]:
    """The lines the rule reports when it runs whatever pass 1's scope says."""
    source = _d(source)
    index = build_index(source, "example.py", "example")
    traced = compute_facts([index]).for_path("example.py")
    ctx = RuleContext("example.py", cst.parse_module(source), index, traced, {})
    return [ctx.lines([v.node])[0][0] for v in RULES_BY_CODE["TFR306"].check(ctx)]


# -- where the dataset comes from ---------------------------------------------------

_HELPER = """
    import tensorflow as tf


    def make_ds(path, batch_size, shuffle=True, drop_remainder=True):
        ds = tf.data.TextLineDataset(path)
        if shuffle:
            ds = ds.shuffle(buffer_size=1000)
        return ds.batch(batch_size=batch_size, drop_remainder=drop_remainder)


    def run(path, step_fn, log_every, flag):
        ds = {call}
        total = 0
        for step, batch in enumerate(ds):
            total += step_fn(batch)
            if step % log_every == 0:
                print('running mean', total / (step + 1))
        return total
"""


@pytest.mark.parametrize(
    "call",
    [
        "make_ds(path, 64, True)",
        "make_ds(path, 64)",
        "make_ds(path, batch_size=64, shuffle=False)",
        "make_ds(path, 64, True, True)",
        "make_ds(path, 64, drop_remainder=True)",
    ],
)
def test_a_helper_that_drops_the_remainder_by_default_feeds_full_batches(call: str) -> None:
    assert _lines(_HELPER.format(call=call)) == []


@pytest.mark.parametrize(
    "call",
    [
        "make_ds(path, 64, True, False)",
        "make_ds(path, 64, drop_remainder=False)",
        "make_ds(path, 64, True, flag)",  # a parameter whose caller is not in the file
        "make_ds(path, 64, drop_remainder=flag)",
        "make_ds(path, 64, **flag)",  # maybe `drop_remainder=False` in the mapping
        "make_ds(*flag)",
        "make_ds(path)",  # a required parameter left out: the call raises
    ],
)
def test_a_remainder_not_known_to_be_dropped_keeps_the_finding(call: str) -> None:
    assert _lines(_HELPER.format(call=call)) == [17]


def test_a_helper_returning_one_of_two_datasets_keeps_the_finding() -> None:
    source = """
        import tensorflow as tf


        def make_ds(path, training=True):
            ds = tf.data.TextLineDataset(path)
            if training:
                return ds.batch(64, drop_remainder=True)
            return ds.batch(64)


        def run(path, step_fn):
            total = 0
            for step, batch in enumerate(make_ds(path)):
                total += step_fn(batch)
            return total / (step + 1)
    """
    assert _lines(source) == [15]
    both = source.replace("return ds.batch(64)\n", "return ds.batch(64, drop_remainder=True)\n")
    assert _lines(both) == []


def test_the_dataset_is_followed_through_locals_receivers_and_nested_helpers() -> None:
    source = """
        import tensorflow as tf

        DROP = True


        def _batched(ds, size, drop):
            ds = ds.batch(size, drop_remainder=drop)
            return ds


        def make_ds(path, drop_remainder=DROP):
            ds = tf.data.TextLineDataset(path).shuffle(1000)
            return _batched(ds, 64, drop_remainder)


        def run(path, step_fn):
            ds = make_ds(path)
            total = 0
            for step, batch in enumerate(ds.prefetch(2)):
                total += step_fn(batch)
            return total / (step + 1)
    """
    assert _lines(source) == []
    assert _lines(source.replace("DROP = True", "DROP = False")) == [21]
    assert _lines(source.replace("make_ds(path)", "make_ds(path, False)")) == [21]


def test_drop_remainder_given_by_position_is_read() -> None:
    source = """
        import tensorflow as tf


        def run(ds, step_fn):
            total = 0
            for step, batch in enumerate(ds.batch(64, {drop})):
                total += step_fn(batch)
            return total / (step + 1)
    """
    assert _lines(source.format(drop="True")) == []
    assert _lines(source.format(drop="False")) == [8]


def test_a_recursive_helper_is_followed_once() -> None:
    source = """
        import tensorflow as tf


        def make_ds(path, depth=0):
            if depth:
                return make_ds(path, depth - 1)
            return tf.data.TextLineDataset(path).batch(64)


        def run(path, step_fn):
            total = 0
            for step, batch in enumerate(make_ds(path, 3)):
                total += step_fn(batch)
            return total / (step + 1)
    """
    assert _lines(source) == [14]


# -- binding a call's arguments -----------------------------------------------------


def _bound(signature: str, call: str) -> dict[str, str | None]:
    function = cst.parse_statement(f"def f{signature}:\n    pass\n")
    assert isinstance(function, cst.FunctionDef)
    expr = cst.parse_expression(call)
    assert isinstance(expr, cst.Call)
    module = cst.Module([])
    return {
        name: None if b.value is None else ("" if b.passed else "=") + module.code_for_node(b.value)
        for name, b in bind_arguments(function, expr.args).items()
    }


def test_bind_arguments_follows_python_binding() -> None:
    assert _bound("(a, b=2, *, c=3)", "f(1, c=4)") == {"a": "1", "b": "=2", "c": "4"}
    assert _bound("(a, /, b=2)", "f(1, b=5)") == {"a": "1", "b": "5"}
    assert _bound("(a, *rest, k=1)", "f(1, 2, 3)") == {"a": "1", "k": "=1"}
    assert _bound("(a, **options)", "f(1, other=2)") == {"a": "1"}
    # What a spread may hold is unknown; what the call names stays known.
    assert _bound("(a, b=2)", "f(1, **kw)") == {"a": "1", "b": None}
    assert _bound("(a, b=2)", "f(*args)") == {"a": None, "b": None}
    # Calls that raise: every parameter unknown.
    assert _bound("(a, b=2)", "f(1, 2, 3)") == {"a": None, "b": None}
    assert _bound("(a, b=2)", "f(1, a=2)") == {"a": None, "b": None}
    assert _bound("(a, b=2)", "f(1, c=2)") == {"a": None, "b": None}
    assert _bound("(a, b=2)", "f(b=1)") == {"a": None, "b": None}


# -- the running sum divided, whatever the spelling ---------------------------------

_DIVIDED = """
    import numpy as np
    import tensorflow as tf


    def run(path, step_fn):
        train_ds = tf.data.TextLineDataset(path).batch({batch})
        total = 0
        n_batches = 0
        for step, batch in enumerate(train_ds):
            total += step_fn(batch)
            n_batches += 1
        {division}
        return total
"""


@pytest.mark.parametrize(
    "division",
    [
        "total /= (step + 1)",
        "total /= n_batches",
        "total /= len(train_ds)",
        "count = len(train_ds); total /= count",
        "total = np.divide(total, n_batches)",
        "total = tf.math.divide(total, step + 1)",
    ],
)
def test_a_running_sum_divided_by_the_batch_count_is_reported(division: str) -> None:
    assert _lines_below_prefilter(_DIVIDED.format(batch="64", division=division)) == [12]


@pytest.mark.parametrize("division", ["total /= (step + 1)", "total = np.divide(total, n_batches)"])
def test_equal_batches_or_another_divisor_are_not_reported(division: str) -> None:
    dropped = _DIVIDED.format(batch="64, drop_remainder=True", division=division)
    assert _lines_below_prefilter(dropped) == []
    other = _DIVIDED.format(batch="64", division="total /= 2")
    assert _lines_below_prefilter(other) == []


# A running sum divided in the loop's `else` by the batches counted.
_AUGMENTED = """
import tensorflow as tf


def run(path, step_fn):
    ds = tf.data.TextLineDataset(path).batch(64)
    total = 0
    for step, batch in enumerate(ds):
        total += step_fn(batch)
    else:
        total /= (step + 1)
    return total
"""


def test_the_augmented_division_in_the_loops_else_is_reported() -> None:
    source = _AUGMENTED
    assert _lines_below_prefilter(source) == [10]
    weighted = source.replace("total += step_fn(batch)", "total += step_fn(batch) * len(batch)")
    assert _lines_below_prefilter(weighted) == []


def test_augmented_and_plain_divisions_in_one_file_are_both_reported() -> None:
    source = (
        _AUGMENTED
        + """

def run2(path, step_fn):
    ds = tf.data.TextLineDataset(path).batch(64)
    total = 0
    for step, batch in enumerate(ds):
        total += step_fn(batch)
    return total / (step + 1)
"""
    )
    assert _lines(source) == [10, 19]


def test_a_file_whose_only_average_is_augmented_is_checked() -> None:
    """Pass 1 records `total /= n` as dividing a running sum, as it does
    `total / n`: the rule's pre-parse check keeps the file."""
    assert _lines(_AUGMENTED) == [10]


# -- where the dataset comes from, further: progress bars, callers, methods -----------

FULL_BATCHES_IN_AN_EPOCH_LOOP = """
    import tensorflow as tf
    from tqdm import tqdm


    def make_ds(path, batch_size, shuffle=True, drop_remainder=True):
        ds = tf.data.TextLineDataset(path)
        if shuffle:
            ds = ds.shuffle(buffer_size=1000)
        return ds.batch(batch_size=batch_size, drop_remainder=drop_remainder)


    def evaluate(step_fn, dataset):
        total = 0
        for step, batch in tqdm(enumerate(dataset), desc="steps"):
            total += step_fn(batch)
        else:
            total /= (step + 1)
        return total


    def train(path, step_fn, epochs):
        train_ds = make_ds(path, 64, True)
        eval_ds = make_ds(path, 64, False)
        for epoch in tqdm(range(epochs), desc="epochs"):
            total = 0
            for step, batch in tqdm(enumerate(train_ds), desc="steps"):
                with tf.GradientTape() as tape:
                    loss = step_fn(batch)
                total += loss
                if step % 10 == 0:
                    print(total / (step + 1))
            print(evaluate(step_fn, eval_ds))
"""


def test_full_batches_are_seen_through_progress_bars_callers_and_epoch_loops() -> None:
    """A loop over `tqdm(enumerate(ds))` iterates `ds`; a parameter of a
    function takes what this file's calls pass it (`evaluate(step_fn,
    eval_ds)`); an epoch loop whose inner loop trains is not itself a loop
    over batches. Every batch here is full: no finding."""
    assert _lines(FULL_BATCHES_IN_AN_EPOCH_LOOP) == []
    # A caller that keeps the short last batch keeps the finding.
    short = FULL_BATCHES_IN_AN_EPOCH_LOOP.replace(
        "print(evaluate(step_fn, eval_ds))",
        "print(evaluate(step_fn, eval_ds))\n"
        "        print(evaluate(step_fn, make_ds(path, 64, False, False)))",
    )
    assert _lines(short) == [17]  # `total /= (step + 1)` in `evaluate`


def test_a_dataset_a_method_builds_is_followed_into_it() -> None:
    """`self.make_ds(...)` and `Trainer.make_ds(self, ...)`: the class's
    method, its parameters bound with `self` first."""
    source = """
        import tensorflow as tf


        class Trainer:
            def make_ds(self, path, batch_size, drop_remainder=True):
                ds = tf.data.TextLineDataset(path)
                return ds.batch(batch_size, drop_remainder=drop_remainder)

            def run(self, path, step_fn):
                train_ds = self.make_ds(path, 64)
                total = 0
                for step, batch in enumerate(train_ds):
                    total += step_fn(batch)
                print(total / (step + 1))
                eval_ds = Trainer.make_ds(self, path, 64)
                total = 0
                for step, batch in enumerate(eval_ds):
                    total += step_fn(batch)
                print(total / (step + 1))
    """
    assert _lines(source) == []
    assert _lines(source.replace("drop_remainder=True", "drop_remainder=False"))
    through_class = source.replace(
        "self.make_ds(path, 64)", "tf.data.TextLineDataset(path).batch(64, drop_remainder=True)"
    )
    assert _lines(through_class) == []
    assert _lines(through_class.replace("drop_remainder=True", "drop_remainder=False"))


# -- a loop that counts is not a loop over batches ------------------------------------

PER_TASK = """
import tensorflow as tf


class MetaLearner:
    def __init__(self, net, opt, tasks_per_batch):
        self.net, self.opt, self.meta_batch_size = net, opt, tasks_per_batch

    @tf.function
    def outer_step(self, xs, ys):
        with tf.GradientTape() as tape:
            task_losses = []
            for t in {iterable}:
                task_losses.append(tf.reduce_mean(tf.square(self.net(xs[t]) - ys[t])))
            meta_loss = tf.reduce_mean(task_losses)
        grads = tape.gradient(meta_loss, self.net.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.net.trainable_variables))
        return meta_loss
"""


def test_a_range_named_for_batches_counts_tasks_not_batches() -> None:
    # `range(self.meta_batch_size)` yields numbers: one batch, several tasks.
    assert _lines(PER_TASK.format(iterable="range(self.meta_batch_size)")) == []


def test_an_iterable_named_for_batches_is_still_a_loop_over_batches() -> None:
    assert _lines(PER_TASK.format(iterable="self.meta_batch_size")) == [14]


def test_a_counted_loop_that_trains_is_a_loop_over_batches() -> None:
    source = """
    import numpy as np
    import tensorflow as tf


    def fit(model, opt, batches, steps):
        losses = []
        for step in range(steps):
            x, y = next(batches)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            losses.append(loss)
        return np.mean(losses)
    """
    assert _lines(source) == [14]


# A loop whose variables say batches, over a progress bar of a dataset handed in.
NAMED_BATCHES = """
import tensorflow as tf
from tqdm import tqdm


def evaluate(model, loss_fn, data):
    total_loss = tf.constant(0.0)
    steps = 0
    for {target} in tqdm(data):
        total_loss += loss_fn(y_batch, model(x_batch))
        steps += 1
    return total_loss / steps
"""


def test_loop_variables_named_for_batches_make_a_loop_over_batches() -> None:
    assert _lines(NAMED_BATCHES.format(target="x_batch, y_batch")) == [11]
    renamed = NAMED_BATCHES.format(target="x_item, y_item").replace("_batch", "_item")
    assert _lines(renamed) == []


# A running average shown while the loop goes on, and the one kept after it.
_RUNNING = """
import tensorflow as tf


def run(path, step_fn, show):
    ds = tf.data.TextLineDataset(path).batch(64)
    total = 0.0
    for i, batch in enumerate(ds):
        total += step_fn(batch)
        show(total / (i + 1))
    {after}
"""


def test_the_average_kept_after_the_loop_is_reported_not_the_running_one() -> None:
    assert _lines_below_prefilter(_RUNNING.format(after="return total / (i + 1)")) == [10]
    # Without an average after the loop, the running one is what there is.
    assert _lines_below_prefilter(_RUNNING.format(after="return None")) == [9]


# -- what a comprehension iterates ----------------------------------------------------


def test_a_comprehension_over_a_range_of_items_per_batch_averages_no_batches() -> None:
    """`range(speakers_per_batch)` yields speaker indices: a mean over them,
    divided by a count of speakers, weighs no batches, whatever the names."""
    source = """
        import numpy as np


        def false_accept_rate(hits, speakers_per_batch, utterances):
            counted = sum([np.sum(hits[i]) - hits[i, i] for i in range(speakers_per_batch)])
            return counted / (speakers_per_batch - 1) / utterances
    """
    assert _lines(source) == []


def test_a_comprehension_over_a_range_that_runs_a_step_per_element_is_reported() -> None:
    source = """
        import numpy as np


        def evaluate(eval_step, n_batches):
            losses = [eval_step(i) for i in range(n_batches)]
            return np.mean(losses)
    """
    assert _lines(source) == [6]


# -- datasets unpacked from a helper's tuple, and batches of one --------------------

UNPACKED_DATASETS = """
    import numpy as np
    import tensorflow as tf


    def load(n):
        train = tf.data.Dataset.range(100).batch(n, drop_remainder=True)
        test = tf.data.Dataset.range(50).batch(32, drop_remainder=True)
        return train, test, ["a", "b"]


    @tf.function
    def accuracy(batch):
        return tf.reduce_mean(tf.cast(batch, tf.float32))


    def evaluate(test_ds):
        values = []
        for batch in test_ds:
            values.append(accuracy(batch))
        return np.mean(values)


    def main(which):
        if which:
            train_ds, test_ds, names = load(8)
        else:
            train_ds, test_ds, names = load(16)
        print(evaluate(test_ds))
"""


def test_a_dataset_unpacked_from_a_helpers_tuple_is_followed_into_it() -> None:
    """`train_ds, test_ds, names = load(8)` in the caller of the averaging
    function: each unpacked name is one of the values `load` returns, and
    every dataset in them drops the remainder. The caller is otherwise
    inert: check's pruned parse keeps it because it passes the dataset."""
    assert _lines(UNPACKED_DATASETS) == []
    short = UNPACKED_DATASETS.replace(
        "tf.data.Dataset.range(50).batch(32, drop_remainder=True)",
        "tf.data.Dataset.range(50).batch(32)",
    )
    assert _lines(short) == [20]


def test_a_dataset_unpacked_from_another_modules_helper_is_followed(tmp_path) -> None:
    """The same, with `load` in another module of the project."""
    from tfrewrite.pipeline.engine import InputFile, RunOptions, run

    helper, _, rest = _d(UNPACKED_DATASETS).partition("\n\n\n@tf.function")
    files = {
        "data/loaders.py": helper,
        "main.py": "import numpy as np\nimport tensorflow as tf\nfrom data.loaders import load"
        + "\n\n\n@tf.function"
        + rest,
    }

    def lines() -> list[int]:
        for name, text in files.items():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text)
        inputs = [InputFile(str(tmp_path / name)) for name in files]
        options = RunOptions(rule_codes=("TFR306",), root=str(tmp_path))
        return [f.start.line for f in run(inputs, options, jobs=1).findings]

    assert lines() == []
    files["data/loaders.py"] = helper.replace("batch(32, drop_remainder=True)", "batch(32)")
    assert lines() == [15]


@pytest.mark.parametrize(("size", "expected"), [("1", []), ("2", [15])])
def test_batches_of_one_element_are_never_short(size: str, expected: list[int]) -> None:
    """`ds.batch(batch_size)` with `batch_size=1` by default: every batch
    holds one element, so a mean over them is a mean over elements."""
    source = f"""
        import tensorflow as tf


        def get_dataset(path, batch_size={size}):
            ds = tf.data.TFRecordDataset(path)
            ds = ds.batch(batch_size)
            return ds.prefetch(2)


        def evaluate(ds, model):
            total, count = 0.0, 0
            for sample in ds:
                total += float(model(sample))
                count += 1
            return total / count


        print(evaluate(get_dataset("x.tfrecord"), lambda s: 1.0))
    """
    assert _lines(source) == expected


AXIS_MEANS = """
    import numpy as np
    import tensorflow as tf


    @tf.function
    def losses_of(batch):
        return tf.reduce_mean(batch), tf.reduce_max(batch)


    def report(values):
        print(np.mean(values, axis={axis}))


    def validate(ds):
        per_batch = []
        for batch in ds:
            per_batch.append(losses_of(batch))
        print("generator", np.mean(per_batch, axis={axis})[0])
        report(per_batch)


    validate(tf.data.Dataset.range(10).batch(3))
"""


def test_a_mean_along_the_list_of_batches_is_a_per_batch_mean() -> None:
    """`np.mean(per_batch, axis=0)` averages per-batch tuples of losses loss
    by loss, along the list of batches: each batch weighs the same, here and
    in `report`, which averages its parameter so (each average its own
    finding). Along another axis it averages within a batch's values: no
    finding."""
    assert _lines(AXIS_MEANS.replace("{axis}", "0")) == [18, 19]
    inline = '        print("generator", np.mean(per_batch, axis={axis})[0])\n'
    helper_only = AXIS_MEANS.replace(inline, "")
    assert _lines(helper_only.replace("{axis}", "0")) == [18]  # `report(per_batch)`
    assert _lines(AXIS_MEANS.replace("{axis}", "1")) == []


ONE_BATCH = """
import tensorflow as tf


class Pooling(tf.keras.Model):
    def forward(self, {name}, training):
        aux = []
        for graph in {name}:
            aux.append(tf.reduce_mean(self.encode(graph, training=training)))
        return tf.reduce_mean(tf.stack(aux))

    def train_step(self, data):
        graphs, y = data
        with tf.GradientTape() as tape:
            loss = self.forward(graphs, True)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {{"loss": loss}}
"""


@pytest.mark.parametrize("name", ["graphs_batch", "graph_batches"])
def test_a_loop_in_what_a_train_step_calls_is_no_loop_over_batches(name: str) -> None:
    # The step runs `forward` on its one batch: the loop goes over its graphs.
    assert _lines(ONE_BATCH.format(name=name)) == []


def test_the_same_loop_where_no_step_calls_it_is_one() -> None:
    source = ONE_BATCH.format(name="graph_batches").replace(
        "loss = self.forward(graphs, True)", "loss = tf.reduce_mean(self(graphs))"
    )
    assert _lines(source) == [9]


DISTRIBUTED = """
    import numpy as np
    import tensorflow as tf
    from tqdm import tqdm

    strategy = tf.distribute.MirroredStrategy()
    dataset = tf.data.Dataset.from_tensor_slices(np.zeros((100, 3), "float32")).batch(32{drop})
    dist_dataset = strategy.experimental_distribute_dataset(dataset)


    @tf.function
    def train_step(batch):
        return tf.reduce_mean(batch)


    def train():
        losses = []
        progress = tqdm(dist_dataset)
        for batch in progress:
            losses.append(train_step(batch).numpy())
        return np.mean(losses)
"""


def test_a_strategy_hands_out_the_batches_of_the_dataset_it_distributes() -> None:
    """Distributed and wrapped in a progress bar bound to a name, a dataset
    batched with `drop_remainder=True` still gives whole batches."""
    assert _lines(DISTRIBUTED.replace("{drop}", ", drop_remainder=True")) == []
    assert _lines(DISTRIBUTED.replace("{drop}", "")) == [20]


SIZE_PASSED = """
    import tensorflow as tf


    @tf.function
    def test_batch(x, y, shape):
        return tf.reduce_mean(tf.square(x - y))


    def validate(batches):
        total = 0
        for step, (x, y) in enumerate(batches):
            total += test_batch(x, y, y.shape{weight})
        return total / (step + 1)
"""


def test_a_size_handed_to_the_step_weighs_nothing() -> None:
    """`test_batch(x, y, y.shape)` computes a batch's mean: the size it is
    given is no weight on the sum (a product with the size is)."""
    assert _lines(SIZE_PASSED.replace("{weight}", "")) == [13]
    assert _lines(SIZE_PASSED.replace("{weight}", ") * len(y")) == []


RUNNING_MEAN = """
    import tensorflow as tf


    def evaluate(model, batches):
        avg_loss = 0.0
        for i, (x, y) in enumerate(batches):
            loss = tf.reduce_mean(tf.square(model(x) - y))
            avg_loss = (avg_loss * i + loss.numpy()) / (i + 1)
        return avg_loss


    dataset = tf.data.Dataset.from_tensor_slices((tf.zeros((10, 2)), tf.zeros((10, 1))))
    print(evaluate(tf.keras.Sequential([tf.keras.layers.Dense(1)]), dataset.batch(4{drop})))
"""


def test_a_mean_kept_up_to_date_pass_by_pass_is_a_per_batch_average() -> None:
    """`avg = (avg * i + v) / (i + 1)` is the plain mean of the per-batch
    values; with whole batches it is exact."""
    assert _lines(RUNNING_MEAN.replace("{drop}", "")) == [8]
    assert _lines(RUNNING_MEAN.replace("{drop}", ", drop_remainder=True")) == []


LOADERS = """
    import tensorflow as tf


    def create_generators(x, y, batch_size):
        train = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(8).batch(batch_size{drop})
        val = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size{drop})
        return train, val
"""

SCRIPT = """
    import numpy as np
    import tensorflow as tf

    from loaders import create_generators

    if __name__ == "__main__":
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        train_gen, val_gen = create_generators(np.zeros((10, 2)), np.zeros((10, 1)), 4)
        val_losses = []
        for x, y in val_gen:
            val_losses.append(float(tf.reduce_mean(tf.square(model(x) - y))))
        print(np.mean(val_losses))
"""


def test_datasets_another_modules_function_batches_keep_their_short_batch(
    tmp_path: Path,
) -> None:
    """Unpacked from a call of a function of another module that batches
    keeping the remainder, the validation batches may end short."""

    files = {"loaders.py": LOADERS.replace("{drop}", ""), "train.py": SCRIPT}
    assert found_lines(check_project(tmp_path, files, ("TFR306",))) == [("train.py", 12)]
    files["loaders.py"] = LOADERS.replace("{drop}", ", drop_remainder=True")
    assert check_project(tmp_path / "dropped", files, ("TFR306",)) == []
