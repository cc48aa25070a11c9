#!/usr/bin/python3
"""tracekitd.conf(5) from the default configuration file, whose comments
document every key (the file installed as /etc/tracekit/tracekitd.conf):
the page says what the file says.

  mkconfman.py CONF VERSION DATE OUT

  # comment lines before the first section     DESCRIPTION
  [section]                                    a section of the page
  # comment lines                              the text of the key after
  key = value    (or "#key = value": a key     them, under "key = value"
                  left at its default)
"""
import os
import re
import sys

from mkman import esc, code

SECTION = re.compile(r"^\[(\w+)\]$")
KEY = re.compile(r"^#?(\w+) = ?(.*)$")


def parse(text):
    """(description lines, [(section, [(key, value, comment lines)])])"""
    intro, sections, comment = [], [], []
    for line in text.splitlines():
        s, k = SECTION.match(line), KEY.match(line)
        if s:
            sections.append((s.group(1), []))
            comment = []
        elif k and sections:
            sections[-1][1].append((k.group(1), k.group(2), comment))
            comment = []
        elif line.startswith("#"):
            (comment if sections else intro).append(line.lstrip("#").strip())
        elif not line.strip():
            if not sections and intro and intro[-1]:
                intro.append("")
            comment = []
        else:
            sys.exit(f"mkconfman: a line that is no section, key or comment: {line!r}")
    return intro, sections


def render(text, version, date):
    intro, sections = parse(text)
    out = [f'.TH TRACEKITD.CONF 5 "{date}" "tracekit {version}" "tracekit"',
           ".SH NAME", "tracekitd.conf \\- the configuration of tracekitd, the tracekit daemon",
           ".SH SYNOPSIS", "/etc/tracekit/tracekitd.conf", ".SH DESCRIPTION"]
    para = []
    for line in intro + [""]:
        if line:
            para.append(line)
        elif para:
            out += [".PP", esc(" ".join(para))]
            para = []
    out += [".PP", "Unknown sections, keys and values are errors (tracekitd --check-config "
            "says which), so that a typo is never ignored. The values below are the defaults."]
    for section, keys in sections:
        out.append(f".SH [{esc(section)}]")
        for key, value, comment in keys:
            out += [".TP", f".B {code(key)} = {code(value)}" if value else f".B {code(key)} ="]
            out.append(esc(" ".join(comment)) if comment else "")
    out += [".SH SEE ALSO", ".BR tracekitd (8),", ".BR tracekit (8)"]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.split("\n\n")[1])
    conf, version, date, path = sys.argv[1:]
    with open(conf) as f:
        page = render(f.read(), version, date)
    with open(path + ".tmp", "w") as f:
        f.write(page)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
