#!/usr/bin/python3
"""The issue's targets in one place: gathers each section's verdict lines
(those starting "Target" or "**tracekit / libbpf-tools") from
bench/RESULTS.md into its "targets" section, with the section each came
from. Run by `make bench` after the comparisons."""
import re
import sys

from results import RESULTS, write_section


def main():
    text = RESULTS.read_text()
    lines = ["## Targets at a glance", "",
             "Gathered by `bench/targets.py` from the sections below, each from its own "
             "run (see its date).", ""]
    for m in re.finditer(r"<!-- ([\w-]+):begin -->\n(.*?)<!-- \1:end -->", text, re.S):
        name, body = m.group(1), m.group(2)
        if name == "targets":
            continue
        title = re.search(r"^## (.+)$", body, re.M)
        verdicts = [l for l in body.splitlines()
                    if l.startswith(("Target", "**Target", "**tracekit / libbpf-tools", "Verdict"))]
        if verdicts:
            lines.append(f"- {title.group(1) if title else name}:")
            lines += [f"  - {v}" for v in verdicts]
    if len(lines) == 4:
        sys.exit("targets: no verdict lines in bench/RESULTS.md")
    write_section("targets", "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
