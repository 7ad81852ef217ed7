"""Set-up writes: a driver method that binds `self.<attr>` once, before it
starts calling the traced code that reads it.

    def train(self):
        self.generator, self.discriminators = build_networks(cfg)  # set-up
        for batch in dataset:
            self.codes = batch[1]        # per batch: every trace but the first is stale
            self.train_step()            # @tf.function, reads both

The first trace of `train_step` happens after the set-up binding, so it sees
the value every later call sees: nothing is frozen that changes. The
per-batch binding inside the loop is what TFR201 reports. A binding is set-up
only when it is outside every loop of its method (and of any function
nested in it), comes before the method's first call of the traced method (or
of a method of the object that reaches it), and the method itself is not
called from a loop of its module (a driver run once).
"""

from __future__ import annotations

import libcst as cst

from tfrewrite.facts.names import dotted_name
from tfrewrite.facts.state import self_writes
from tfrewrite.facts.walk import iter_with_ancestors

_REPEATING = (cst.For, cst.While, cst.FunctionDef, cst.Lambda, cst.CompFor)


def binds_before_use(method: cst.FunctionDef, attr: str, reaching: set[str]) -> bool:
    """Whether `method` binds `self.<attr>` only outside its loops, every
    time before its first call of `self.<name>` for a name in `reaching`
    (the traced method and the methods that call it). False when it binds
    nothing, or calls none of them after binding."""
    bound = called = False
    for node, ancestors in iter_with_ancestors(method.body):
        if isinstance(node, cst.Call):
            name = dotted_name(node.func) or ""
            called = called or (name.startswith("self.") and name[5:] in reaching)
        elif isinstance(node, cst.BaseSmallStatement):
            if any(written == attr for written, _, _ in self_writes(node)):
                if called or any(isinstance(a, _REPEATING) for a in ancestors):
                    return False  # bound again once traces may have run
                bound = True
    return bound and called
