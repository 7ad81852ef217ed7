"""The table of NumPy functions that take a shape of Python ints
(`facts/numpy_shape_arguments.py`), measured again from the installed NumPy:
the committed table is what `scripts/numpy_shape_arguments.py` gives now
when NumPy is the version it was generated from, and each entry refuses an
unknown dimension where it says."""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tfrewrite.facts.numpy_shape_arguments import NUMPY_SHAPE_ARGUMENTS, NUMPY_VERSION

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "numpy_shape_arguments.py"


def table_script() -> ModuleType:
    """The script, loaded as its command line runs it: beside its sibling
    `generated_tables`."""
    if str(SCRIPT.parent) not in sys.path:
        sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("numpy_shape_arguments_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_committed_table_is_what_the_installed_numpy_gives() -> None:
    if np.__version__ != NUMPY_VERSION:
        pytest.skip(f"the table was generated from NumPy {NUMPY_VERSION}")
    script = table_script()
    assert (
        script.render(np.__version__, script.shape_arguments())
        == SCRIPT.parent.parent.joinpath(
            "src", "tfrewrite", "facts", "numpy_shape_arguments.py"
        ).read_text()
    ), "regenerate: python scripts/numpy_shape_arguments.py"


@pytest.mark.parametrize("name", sorted(NUMPY_SHAPE_ARGUMENTS))
def test_each_function_refuses_an_unknown_dimension_where_the_table_says(name: str) -> None:
    position, keyword = NUMPY_SHAPE_ARGUMENTS[name]
    function = getattr(np, name.removeprefix("numpy."))
    parameters = list(inspect.signature(function).parameters.values())
    assert parameters[position].name == keyword
    required = [p for p in parameters if p.default is inspect.Parameter.empty]
    arguments = [np.ones((3, 2)) for _ in required]
    arguments[position] = [3, 2]
    function(*arguments)
    arguments[position] = [None, 2]
    with pytest.raises(TypeError):
        function(*arguments)
