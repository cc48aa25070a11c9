#!/usr/bin/python3
"""A man page from a program's own --help, so that the page cannot drift
from the code: the build makes every page again from the built program.

  mkman.py [--front CMD] PROGRAM SECTION VERSION DATE OUT [SEE_ALSO...]

--front CMD: PROGRAM is a tool run as `CMD PROGRAM`; its page is
CMD-PROGRAM (as git-log(1) is `git log`'s), its synopsis both ways.

The --help text is argp's layout (every tracekit program's, the front
command's included), read with ARGP_HELP_FMT=rmargin=1000 so that argp
wraps nothing: one line per option, and the doc text with the line
breaks of its source.

  Usage: NAME ...                  SYNOPSIS (and "  or: NAME ..." lines)
  First paragraph.                 NAME's purpose; DESCRIPTION
                                   (blank)
    -x, --long=ARG   Text          OPTIONS, one tagged paragraph each,
   Group header:                   a subsection each
                                   (blank, then a line not indented)
  Paragraphs.                      DESCRIPTION, after the first
  Heading:                         a paragraph with indented lines is
    indented lines                 kept as it is (a table, commands)
  Examples:                        EXAMPLES, as they are
"""
import os
import re
import subprocess
import sys

OPTION = re.compile(r"^ {1,6}(\S.*?)(?: {2,}(\S.*))?$")
GROUP = re.compile(r"^ (\S.*):$")
# "  -x, --long", "      --long", "  -x ARG", "  -- COMMAND"
OPTION_START = re.compile(r"^  (-[^-\s][, ]|    --\S|-- )")
# argp starts an option's text in column 29 (or on the next line, after
# a tag too long): how an option differs from a doc line that begins
# with a dash (argdist's "  -C 'PROBE...'   -H '...'").
DOC_COLUMN = 29


def is_option_line(line):
    if not OPTION_START.match(line):
        return False
    m = re.match(r"^  \S.*? {2,}(?=\S)", line)
    return m is None or m.end() == DOC_COLUMN


def esc(text):
    """Roff text: backslashes, and a leading . or ' that would be a request."""
    text = text.replace("\\", "\\e")
    return "\\&" + text if text[:1] in (".", "'") else text


def code(text):
    """Roff for text to type as it is: minus signs, not hyphens."""
    return esc(text).replace("-", "\\-")


def purpose(desc):
    """The first sentence of the description."""
    text = " ".join(desc)
    return text[:text.index(". ") + 1] if ". " in text else text


def short(sentence):
    """For NAME: the sentence up to its first ": " or " (", without its
    full stop (as `tracekit list` shows it)."""
    cuts = [i for i in (sentence.find(": "), sentence.find(" (")) if i >= 16]
    s = sentence[:min(cuts)] if cuts else sentence
    return s.rstrip(".")


def dedent(lines):
    """Lines less their common indentation."""
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    return [line[indent:] for line in lines]


def paragraphs_of(lines):
    paragraphs, para = [], []
    for line in lines + [""]:
        if line:
            para.append(line)
        elif para:
            paragraphs.append(para)
            para = []
    return paragraphs


def parse(help_text):
    lines = help_text.splitlines()
    i, usage = 0, []
    while i < len(lines) and re.match(r"(Usage:|  or:) ", lines[i]):
        usage.append(lines[i].split(None, 1)[1].strip() if lines[i].startswith("Usage:")
                     else lines[i][len("  or:"):].strip())
        i += 1
    if not usage:
        sys.exit(f"mkman: no 'Usage:' line in --help: {help_text[:200]!r}")
    # The doc before the options: up to the first option line (or group
    # header) of argp's layout.
    start = next((k for k in range(i, len(lines))
                  if is_option_line(lines[k]) or GROUP.match(lines[k])), len(lines))
    before = paragraphs_of(lines[i:start])
    desc = before[0] if before else []
    i = start
    # Options: indented lines and blank lines, until a blank line is
    # followed by one that is not indented.
    options = []
    while i < len(lines):
        line = lines[i]
        if not line:
            if i + 1 < len(lines) and lines[i + 1] and not lines[i + 1].startswith(" "):
                break
            i += 1
            continue
        if not line.startswith(" "):
            break
        g = GROUP.match(line)
        m = OPTION.match(line)
        if g:
            options.append(("group", g.group(1), None))
        elif m:
            # The text goes on (or, for a tag too long for the column,
            # begins) on the lines after, indented past the tags.
            text = [m.group(2)] if m.group(2) else []
            while i + 1 < len(lines) and lines[i + 1].startswith(" " * 8):
                i += 1
                text.append(lines[i].strip())
            options.append(("option", m.group(1), " ".join(text)))
        i += 1
    return usage, desc, options, before[1:] + paragraphs_of(lines[i:])


def render(name, section, version, date, help_text, see_also, front=None):
    usage, desc, options, paragraphs = parse(help_text)
    page = f"{front}-{name}" if front else name
    out = [f'.TH {page.upper()} {section} "{date}" "tracekit {version}" "tracekit"',
           ".SH NAME", f"{code(page)} \\- {esc(short(purpose(desc)))}",
           ".SH SYNOPSIS", ".nh"]
    forms = [f"{front} {u}" for u in usage] + usage if front else usage
    for k, u in enumerate(forms):
        words = u.split(" ")
        n = 2 if front and k < len(usage) else 1   # "tracekit execsnoop" in bold
        out += [".br"] if k else []
        out += [f".B {code(' '.join(words[:n]))}"]
        if words[n:]:
            out.append(code(" ".join(words[n:])))
    out += [".hy", ".SH DESCRIPTION", esc(" ".join(desc))]
    examples, options_note = [], []
    for p in paragraphs:
        if p[0].startswith("Mandatory or optional arguments"):
            options_note = [".PP", esc(" ".join(p))]   # argp's, about the options
            continue
        if p[0].strip() == "Examples:":
            examples = p[1:]
            continue
        if any(line.startswith(" ") for line in p):
            out.append(".PP")
            if not p[0].startswith(" "):   # a heading over indented lines
                out.append(esc(p[0]))
                p = p[1:]
            out += [".RS", ".nf"] + [code(line) for line in dedent(p)] + [".fi", ".RE"]
        else:
            out += [".PP", esc(" ".join(p))]
    if options:
        out.append(".SH OPTIONS")
    for kind, tag, text in options:
        if kind == "group":
            out.append(f".SS {esc(tag)}")
        else:
            out += [".TP", f".B {code(tag)}", esc(text)]
    out += options_note
    if examples:
        out += [".SH EXAMPLES", ".nf"] + [code(e) for e in dedent(examples)] + [".fi"]
    if see_also:   # "tracekit(8)" -> .BR tracekit (8)
        refs = [".BR " + re.sub(r"[(](\w+)[)]$", r" (\1)", s) for s in see_also]
        out += [".SH SEE ALSO", ",\n".join(refs)]
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    front = None
    if args[:1] == ["--front"]:
        front, args = args[1], args[2:]
    if len(args) < 5:
        sys.exit(__doc__.split("\n\n")[1])
    program, section, version, date, path = args[:5]
    env = dict(os.environ, ARGP_HELP_FMT="rmargin=1000", LC_ALL="C")
    r = subprocess.run([program, "--help"], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"mkman: {program} --help exited {r.returncode}: {r.stderr.strip()}")
    name = os.path.basename(program)
    page = render(name, section, version, date, r.stdout, args[5:], front)
    with open(path + ".tmp", "w") as f:
        f.write(page)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
