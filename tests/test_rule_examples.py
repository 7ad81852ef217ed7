"""Every rule's documented examples are its tests (as in Fixit): each
`Invalid` example must produce findings and fix to its `after` text, fixing
must be idempotent, and each `Valid` example must produce nothing."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.rules import ALL_RULES
from tfrewrite.rules.base import Invalid, Valid

CASES = [
    pytest.param(
        rule,
        example,
        id=f"{rule.code}-{'invalid' if isinstance(example, Invalid) else 'valid'}-{i}",
    )
    for rule in ALL_RULES
    for i, example in enumerate(rule.examples)
]


@pytest.mark.parametrize(("rule", "example"), CASES)
def test_rule_example(rule, example):
    if isinstance(example, Valid):
        code = textwrap.dedent(example.code)
        findings = check_source(code, select=[rule.code])
        assert findings == [], f"{rule.code} should not fire:\n{code}"
        return
    before = textwrap.dedent(example.before)
    findings = check_source(before, select=[rule.code])
    assert len(findings) == example.findings, [f.message for f in findings]
    assert all(f.code == rule.code for f in findings)
    fixed = fix_source(before, select=[rule.code], unsafe_fixes=example.unsafe)
    if example.after is None:
        assert fixed == before, "a rule with no fix for this example changed the source"
    else:
        assert fixed == textwrap.dedent(example.after)
        assert fix_source(fixed, select=[rule.code], unsafe_fixes=example.unsafe) == fixed


def test_every_rule_has_examples_and_docs():
    for rule in ALL_RULES:
        assert rule.code.startswith("TFR") and len(rule.code) == 6
        assert any(isinstance(e, Invalid) for e in rule.examples), rule.code
        assert any(isinstance(e, Valid) for e in rule.examples), rule.code
        assert rule.summary and rule.explanation.strip()


def test_codes_are_unique():
    codes = [r.code for r in ALL_RULES]
    assert len(codes) == len(set(codes))
