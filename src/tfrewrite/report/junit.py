"""JUnit XML, for CI systems that read only test reports.

One `testsuite` per file with findings, one failing `testcase` per finding
(`file` and `line` attributes, which GitLab and others use to link the
source), one `error` per file that could not be read or parsed. A clean run is
one passing test case, so a report reader never sees an empty report.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from tfrewrite.findings import Applicability, FileError, Finding
from tfrewrite.report.base import ReportContext, register


def _failure_text(finding: Finding) -> str:
    where = finding.location
    text = f"{where}: {finding.code} {finding.message}"
    if finding.fix is not None:
        kind = "safe" if finding.fix.applicability is Applicability.SAFE else "unsafe"
        text += f"\nFix ({kind}): {finding.fix.message}"
    return text


@register("junit")
def render_junit(findings: list[Finding], errors: list[FileError], ctx: ReportContext) -> str:
    root = ET.Element(
        "testsuites",
        name="tfrewrite",
        tests=str(max(len(findings) + len(errors), 1)),
        failures=str(len(findings)),
        errors=str(len(errors)),
    )
    for error in errors:
        suite = ET.SubElement(
            root, "testsuite", name=error.path, tests="1", failures="0", errors="1"
        )
        case = ET.SubElement(
            suite, "testcase", name="file-error", classname=error.path, file=error.path
        )
        if error.line is not None:
            case.set("line", str(error.line))
        ET.SubElement(case, "error", message=error.message).text = error.describe()
    for path, group in groupby(sorted(findings, key=Finding.sort_key), key=lambda f: f.path):
        items = list(group)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=path,
            tests=str(len(items)),
            failures=str(len(items)),
            errors="0",
        )
        for finding in items:
            where = f"{finding.start.line}:{finding.start.column}"
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"{finding.code} {finding.rule_name} ({where})",
                classname=path,
                file=path,
                line=str(finding.start.line),
            )
            ET.SubElement(
                case, "failure", message=finding.message, type=finding.code
            ).text = _failure_text(finding)
    if not findings and not errors:
        suite = ET.SubElement(
            root, "testsuite", name="tfrewrite", tests="1", failures="0", errors="0"
        )
        ET.SubElement(suite, "testcase", name="no findings", classname="tfrewrite")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
