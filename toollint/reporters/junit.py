"""`--output-format junit`: JUnit XML, which most CI systems show as a test report.

One `<testsuite>` per file with findings, one `<testcase>` per finding (`name` the code and tool,
`classname` the file) holding a `<failure>`; a clean run is one passing test case, so a report
with no failures is visibly a run that happened. Text that XML 1.0 cannot hold (control
characters, undecodable file-name bytes) is escaped as `\\xNN`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from itertools import groupby
from typing import TextIO

from toollint import registry
from toollint.console import printable
from toollint.reporters import Report, verdict_note

# Characters XML 1.0 forbids even escaped: C0 controls but tab, LF and CR; surrogates; U+FFFE/FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", printable(text))


def write_junit(report: Report, stream: TextIO) -> None:
    findings = report.reported
    suites = ET.Element("testsuites", name="toollint", tests=str(max(len(findings), 1)),
                        failures=str(len(findings)))
    if not findings:
        suite = ET.SubElement(suites, "testsuite", name="toollint", tests="1", failures="0")
        ET.SubElement(suite, "testcase", name="All checks passed", classname="toollint")
    for path, group in groupby(findings, key=lambda f: f.path):
        cases = list(group)
        suite = ET.SubElement(suites, "testsuite", name=xml_text(path), tests=str(len(cases)),
                              failures=str(len(cases)))
        for f in cases:
            name = f"{f.code} {f.tool}" if f.tool else f.code
            case = ET.SubElement(suite, "testcase", name=xml_text(name), classname=xml_text(path),
                                 file=xml_text(path), line=str(f.line))
            message = f"{f.code} [{registry.rule_name(f.code)}] {f.message}{verdict_note(f)}"
            failure = ET.SubElement(case, "failure", message=xml_text(message), type=f.code)
            failure.text = xml_text(f"{path}:{f.line}:{f.col}: {message}")
    ET.indent(suites)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(ET.tostring(suites, encoding="unicode") + "\n")
