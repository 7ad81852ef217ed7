"""The shared tensor analysis: which expressions are tensors, scalars, and of
which dtype kind (boolean, floating-point, integer, unknown). Unknown must
mean "not a tensor" / "no dtype fact"."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tfrewrite.facts.bindings import bound_names
from tfrewrite.facts.names import NameResolver
from tfrewrite.facts.tensor_kinds import TensorKind
from tfrewrite.facts.tensors import TensorFacts

RESOLVER = NameResolver({"tf": "tensorflow", "np": "numpy", "keras": "keras"})


def facts_for(
    body: str, params: str = "y_true, y_pred", tensor_params=("y_true", "y_pred")
) -> TensorFacts:
    source = f"def f({params}):\n" + textwrap.indent(textwrap.dedent(body).strip() + "\n", "    ")
    function = cst.ensure_type(cst.parse_module(source).body[0], cst.FunctionDef)
    return TensorFacts(function, RESOLVER, tensor_params)


def kind(facts: TensorFacts, expression: str) -> TensorKind:
    return facts.kind(cst.parse_expression(expression))


EMPTY = facts_for("pass")


@pytest.mark.parametrize(
    ("expression", "tensor", "scalar", "boolean", "floating", "integer"),
    [
        ("y_pred", True, False, False, True, False),
        ("tf.reduce_mean(y_pred)", True, True, False, True, False),
        ("tf.reduce_mean(tf.square(y_pred - y_true))", True, True, False, True, False),
        ("tf.reduce_sum(y_pred, axis=0)", True, False, False, True, False),
        ("tf.reduce_mean(y_pred) > 0.5", True, True, True, False, False),
        ("tf.equal(tf.reduce_sum(y_pred), 0.0)", True, True, True, False, False),
        ("tf.reduce_any(y_pred > 0)", True, True, True, False, False),
        ("tf.size(y_pred)", True, True, False, False, True),
        ("tf.math.count_nonzero(y_pred)", True, True, False, False, True),
        ("tf.constant(0)", True, True, False, False, True),
        ("tf.constant(1.5)", True, True, False, True, False),
        ("tf.zeros(())", True, True, False, True, False),
        ("tf.zeros((3,))", True, False, False, True, False),
        ("tf.cast(y_pred, tf.int32)", True, False, False, False, True),
        ("tf.cast(y_pred, tf.float64)", True, False, False, True, False),
        ("tf.ones([3], dtype=tf.bool)", True, False, True, False, False),
        ("tf.argmax(y_pred)", True, False, False, False, True),
        ("tf.reduce_mean(y_pred) / 2", True, True, False, True, False),
        ("tf.size(y_pred) + 1", True, True, False, False, True),
        ("-tf.reduce_mean(y_pred)", True, True, False, True, False),
        ("tf.reduce_mean(y_pred) * (2.0 + 1.0)", True, True, False, True, False),
        (
            "tf.cond(tf.reduce_mean(y_pred) > 0, lambda: 1.0, lambda: 2.0)",
            True,
            True,
            False,
            True,
            False,
        ),
        (
            "tf.cond(tf.reduce_mean(y_pred) > 0, lambda: (1.0, 2.0), lambda: (2.0, 1.0))",
            False,
            False,
            False,
            False,
            False,
        ),
    ],
)
def test_kinds(expression, tensor, scalar, boolean, floating, integer):
    assert kind(EMPTY, expression) == TensorKind(tensor, scalar, boolean, floating, integer)


@pytest.mark.parametrize(
    "expression",
    [
        "y_pred.shape[-1] == 1",
        "len(y_pred.shape) == 2",
        "y_pred.shape.rank",
        "y_true is None",
        "isinstance(y_true, dict)",
        "y_pred.dtype == tf.float16",
        "tf.executing_eagerly()",
        "not y_pred",
        "y_pred is not None and y_true is not None",
        "tf.cond(y_pred, true_fn, false_fn)",
        "helper(y_pred)",
        "0 < tf.reduce_mean(y_pred) < 1",
    ],
)
def test_not_tensors(expression):
    assert not EMPTY.is_tensor(cst.parse_expression(expression))


def test_names_follow_their_bindings():
    facts = facts_for(
        """
        err = y_pred - y_true
        m = tf.reduce_mean(err)
        n = tf.size(err)
        acc = tf.zeros(())
        acc = acc + m
        acc += 1
        flag = m > 0
        count = 0
        count = count + 1
        """
    )
    assert facts.name_kind("err") == TensorKind(True, floating=True)
    assert facts.name_kind("m") == TensorKind(True, True, floating=True)
    assert facts.name_kind("n") == TensorKind(True, True, integer=True)
    # `tf.zeros(())` is a scalar and so stays `acc` through its updates.
    assert facts.name_kind("acc") == TensorKind(True, True, floating=True)
    assert facts.name_kind("flag") == TensorKind(True, True, boolean=True)
    assert not facts.name_kind("count").tensor
    assert facts.tensor_names() >= {"err", "m", "n", "acc", "flag", "y_true", "y_pred"}


def test_a_self_referencing_scalar_stays_scalar():
    facts = facts_for(
        """
        total = tf.reduce_sum(y_pred)
        total = total * 2.0
        total += 1.0
        """
    )
    assert facts.is_scalar_tensor(cst.Name("total"))
    assert facts.name_kind("total").floating


def test_a_name_rebound_to_an_unknown_value_is_not_a_tensor():
    facts = facts_for(
        """
        x = tf.reduce_sum(y_pred)
        x = helper(x)
        """
    )
    assert not facts.name_kind("x").tensor


def test_tensor_params_are_floating_and_annotations_are_tensors():
    facts = facts_for("pass", params="x: tf.Tensor, y", tensor_params=())
    assert facts.name_kind("x") == TensorKind(True)
    assert not facts.name_kind("y").tensor


def test_tf_cond_of_a_name_holding_python_floats_is_floating():
    facts = facts_for(
        """
        m = tf.reduce_mean(y_pred)
        scale = 1.0
        scale = tf.cond(m > 1.0, lambda: 3.0, lambda: scale)
        """
    )
    value = cst.parse_expression("tf.cond(m > 0.0, lambda: scale, lambda: 2.0)")
    assert facts.kind(value).floating


def test_tf_cond_of_an_unknown_value_has_no_dtype_fact():
    facts = facts_for("pass")
    value = cst.parse_expression(
        "tf.cond(tf.reduce_mean(y_pred) > 0, lambda: helper(), lambda: 2.0)"
    )
    assert facts.kind(value) == TensorKind(True)


def test_bound_names():
    module = cst.parse_module(
        "a = 1\nb, (c, d) = x\nfor i in range(3):\n    e += i\nwith f() as g:\n    pass\n"
    )
    assert bound_names(module) == {"a", "b", "c", "d", "i", "e", "g"}


def test_kind_at_uses_the_bindings_before_a_statement_outside_loops():
    source = textwrap.dedent(
        """
        def f(y_true, y_pred):
            m = tf.reduce_mean(y_pred)
            if m > 1.0:
                pass
            m = helper(m)
            for i in range(2):
                if m > 1.0:
                    pass
        """
    )
    function = cst.ensure_type(cst.parse_module(source).body[0], cst.FunctionDef)
    facts = TensorFacts(function, RESOLVER, ("y_true", "y_pred"))
    first_if = function.body.body[1]
    loop_if = function.body.body[3].body.body[0]
    test = cst.parse_expression("m > 1.0")
    assert not facts.is_tensor(test)  # function-wide: `m = helper(m)` is unknown
    assert facts.kind_at(test, first_if) == TensorKind(True, True, boolean=True)
    assert not facts.kind_at(test, loop_if).tensor  # a loop: every binding reaches it


def test_names_defined_through_each_other():
    facts = facts_for(
        """
        m = tf.reduce_mean(y_pred)
        tmp = m * 2.0
        m = tmp + 1.0
        """
    )
    assert facts.name_kind("m") == TensorKind(True, True, floating=True)
    assert facts.name_kind("tmp") == TensorKind(True, True, floating=True)


def test_a_local_that_is_not_a_tensor_shadows_an_outer_tensor():
    source = textwrap.dedent(
        """
        def outer(y_true, y_pred):
            m = tf.reduce_mean(y_pred)
            def inner():
                m = helper()
                return m
        """
    )
    function = cst.ensure_type(cst.parse_module(source).body[0], cst.FunctionDef)
    outer = TensorFacts(function, RESOLVER, ("y_true", "y_pred"))
    inner_def = cst.ensure_type(function.body.body[1], cst.FunctionDef)
    inner = TensorFacts(inner_def, RESOLVER, (), outer)
    assert outer.name_kind("m").tensor
    assert not inner.name_kind("m").tensor
    assert inner.name_kind("y_pred").tensor  # not shadowed: the outer fact


def test_a_rebound_python_parameter_is_not_a_tensor():
    facts = facts_for(
        """
        n = n + 1
        same = same
        """,
        params="y_true, y_pred, n, same",
    )
    assert not facts.name_kind("n").tensor
    assert not facts.name_kind("same").tensor


def test_names_holding_python_numbers_keep_products_scalar():
    facts = facts_for(
        """
        m = tf.reduce_mean(y_pred)
        scale = 1.0
        scale = scale * 2
        tmp = m * scale
        """
    )
    assert facts.is_scalar_tensor(cst.Name("tmp"))
    assert not facts.name_kind("scale").tensor


def test_tf_cond_with_local_branch_functions():
    facts = facts_for(
        """
        m = tf.reduce_mean(y_pred)
        def _m_if_true(m):
            m = m * 2.0
            return m
        def _other():
            return (m, m)
        m = tf.cond(m > 1.0, lambda: _m_if_true(m), lambda: m)
        """
    )
    assert facts.name_kind("m") == TensorKind(True, True, floating=True)
    pair = cst.parse_expression("tf.cond(m > 1.0, _other, _other)")
    assert not facts.kind(pair).tensor  # a structure


def test_shape_first_constructors_with_empty_shape_are_scalars() -> None:
    import libcst as cst

    from tfrewrite.facts.names import NameResolver
    from tfrewrite.facts.tensors import TensorFacts

    module = cst.parse_module(
        "def f(x):\n"
        "    a = tf.random.uniform([])\n"
        "    b = tf.random.normal(shape=())\n"
        "    c = tf.zeros([3])\n"
        "    d = tf.fill([], 1.0)\n"
        "    return a, b, c, d\n"
    )
    facts = TensorFacts(module.body[0], NameResolver({"tf": "tensorflow"}))
    assert facts.is_scalar_tensor(cst.Name("a"))
    assert facts.is_scalar_tensor(cst.Name("b"))
    assert facts.is_tensor(cst.Name("c")) and not facts.is_scalar_tensor(cst.Name("c"))
    assert facts.is_scalar_tensor(cst.Name("d"))
