"""Former home of the random-sampling machinery, kept so that code importing
it from here still runs: it now lives in `tfrewrite.transforms`."""

from tfrewrite.transforms.random_sampling import RandomSamplingRule, SampleWriter
from tfrewrite.transforms.traced_calls import (
    Refusal,
    SampleSite,
    bind,
    is_integer_literal,
    is_none,
    iter_module_calls,
)

__all__ = [
    "RandomSamplingRule",
    "Refusal",
    "SampleSite",
    "SampleWriter",
    "bind",
    "is_integer_literal",
    "is_none",
    "iter_module_calls",
]
