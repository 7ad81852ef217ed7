"""What a project function does, told to the modules that call it.

Whether it returns a tensor (`FunctionInfo.returns_tensor`,
`ModuleIndex.callee_tensor_results`): `adv = wasserstein_loss(y, p)` of
another module is a tensor in the caller's facts. Whether the datasets it
batches all batch to one size (`FunctionInfo.batch_sizes`,
`ModuleIndex.callee_equal_batches`): a loop over what
`load_dataset(...)` of another module returns then sees no short last batch
(TFR306); so does a loop over an attribute of an object of a class whose
methods batch only that way (`loader.valid_ds` of `loader = Loader(...)`);
one that batches some dataset keeping the remainder
(`ModuleIndex.callee_short_batches`) may hand the loop a short last batch.
And the parameters it gives a role, below.

Pass 1 records, per function and on `ast` alone, the parameters it gives a
role: those it hands TensorFlow as a shape or a count
(`FunctionInfo.shape_params`: `tf.tile(c, (batch_size, 1))`, TFR107) and
those it averages whole (`FunctionInfo.averaged_params`: `np.mean(values)`,
TFR306). A caller's argument there plays the role as if the caller had
written the op itself: a static batch dimension becomes a shape, a list of
per-batch losses is averaged. The project facts give each module, keyed by
the name it calls the function by, the function's parameters in order and
those that have the role (`ModuleIndex.callee_shape_params`,
`ModuleIndex.callee_averaged_params`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrewrite.facts.class_dispatch import Lookup
    from tfrewrite.facts.index_records import ModuleIndex

# FunctionInfo field -> the ModuleIndex field its callers learn it in.
ROLES = {"shape_params": "callee_shape_params", "averaged_params": "callee_averaged_params"}


def record_callee_parameters(indexes: list[ModuleIndex], lookup: Lookup) -> None:
    """For each module, the project functions its functions call that give
    a parameter one of the `ROLES` (`coords_grid(bs, h, w)` of `from .corr
    import coords_grid`, `Metric.from_list(losses)`)."""
    for index in indexes:
        callees = {callee for info in index.functions.values() for callee in info.calls}
        callees.update(index.module_call_lines)  # a script's own top-level calls
        for callee in sorted(callees):
            if not callee or callee.endswith("()"):
                continue
            # A function, or a method of an object a class holds
            # (`self.decoder.reset_state`, as `Model.decoder.reset_state`),
            # or that object called (`self.attention(x)`: its `call`).
            targets = list(lookup.find(callee, index)) or lookup.held_callee(callee)
            for target_index, target in targets:
                info = target_index.functions.get(target)
                if info is None:
                    if target in target_index.classes and _batches_equally(target_index, target):
                        index.callee_equal_batches.add(callee)
                    continue
                if info.batch_sizes == "equal":
                    index.callee_equal_batches.add(callee)
                elif info.batch_sizes == "any":
                    index.callee_short_batches.add(callee)
                if info.returns_tensor:
                    index.callee_tensor_results.add(callee)
                roles = [(known, getattr(info, role)) for role, known in ROLES.items()]
                for known, params in roles:
                    if params:
                        getattr(index, known)[callee] = (tuple(info.caller_params), params)
                if any(params for _, params in roles):
                    break


def _batches_equally(index: ModuleIndex, class_qualname: str) -> bool:
    """Whether the methods of a class batch datasets, each dropping the
    remainder: every dataset its objects keep batches to one size."""
    prefix = class_qualname + "."
    sizes = {
        info.batch_sizes
        for name, info in index.functions.items()
        if name.startswith(prefix) and info.batch_sizes
    }
    return sizes == {"equal"}
