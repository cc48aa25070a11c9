"""pytest's JUnit XML read back: per-test outcomes and the head of each
failure's message. Shared by tests/vm/check-vm.py (one kernel's summary)
and tests/repeat.py (the table of tests that failed in any of N runs)."""
import os
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def nodeid(classname, name):
    """pytest's node id back from JUnit's dotted classname."""
    parts = classname.split(".")
    for i in range(len(parts), 0, -1):
        path = "/".join(parts[:i]) + ".py"
        if os.path.exists(os.path.join(ROOT, path)):
            return "::".join([path, *parts[i:], name])
    return f"{classname}::{name}"


def message_head(child, lines=6, width=300):
    """The first lines of a failure's message (pytest puts the assertion
    and its values there)."""
    text = (child.get("message") or child.text or "").strip()
    return [l[:width] + ("..." if len(l) > width else "")
            for l in text.splitlines()[:lines]]


def read(path):
    """None where the file is missing or cut short (a run that died), else
    {"passed", "failed", "errors", "skipped": counts, "cases": [(nodeid,
    outcome, message lines)]} with outcome one of passed, failure, error,
    skipped."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    n = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for s in suites:
        for k in n:
            n[k] += int(s.get(k, 0))
    cases = []
    for case in root.iter("testcase"):
        outcome, msg = "passed", []
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome, msg = child.tag, message_head(child)
                break
        cases.append((nodeid(case.get("classname", ""), case.get("name", "")),
                      outcome, msg))
    return {"passed": n["tests"] - n["failures"] - n["errors"] - n["skipped"],
            "failed": n["failures"], "errors": n["errors"],
            "skipped": n["skipped"], "cases": cases}
