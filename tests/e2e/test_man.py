"""Man pages and bash completion (build/man, build/completion): a page for
every program that lists every option the program accepts, and a
completion that offers them all. What a program accepts is read from its
--usage, argp's list of every option, which neither the pages (made from
--help) nor these tests' parsing of the pages share."""
import os
import re
import subprocess

import pytest

from conftest import BIN, run

MAN = BIN.parent / "man"
COMPLETION = BIN.parent / "completion" / "tracekit"
PROGRAMS = sorted(p.name for p in BIN.iterdir() if os.access(p, os.X_OK))
ARGP_PROGRAMS = [p for p in PROGRAMS if p != "tracekit"]   # the front command has no --usage
COMMANDS = ("tracekit", "tracekit-doctor", "tracekitd")


def page_of(program):
    """A tool's page is tracekit-TOOL(8), as git-log(1) is `git log`'s."""
    return f"{program}.8" if program in COMMANDS else f"tracekit-{program}.8"


def accepted_options(program):
    """Every option in `program --usage`: -x and --long."""
    r = run(program, "--usage")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    opts = set()
    for cluster in re.findall(r"\[-([^-\s\]]+)\]", text):
        opts |= {f"-{c}" for c in cluster}
    opts |= {f"-{c}" for c in re.findall(r"\[-([^-\s]) [^\]]+\]", text)}
    opts |= {f"--{o}" for o in re.findall(r"\[--([^\s=\[\]]+)", text)}
    return opts


def page_source(name):
    return (MAN / name).read_text()


def page_tags(src):
    """The options a page's OPTIONS section tags (.TP then .B)."""
    tags = set()
    for tag in re.findall(r"^\.TP\n\.B (.*)$", src, re.M):
        for part in tag.replace("\\-", "-").split(", "):
            tags.add(re.split(r"[= \[]", part)[0])
    return tags


def render(path):
    """The page as man shows it, with groff's warnings."""
    r = subprocess.run(["man", "--warnings", "-l", str(path)], capture_output=True, text=True,
                       env={**{k: v for k, v in os.environ.items()
                                           if k != "MAN_KEEP_FORMATTING"}, "MANWIDTH": "100"})
    return r


def test_a_page_for_every_program():
    assert sorted(p.name for p in MAN.iterdir()) == \
        sorted([page_of(p) for p in PROGRAMS] + ["tracekitd.conf.5"])


@pytest.mark.parametrize("program", ARGP_PROGRAMS)
def test_page_lists_every_option(program):
    assert accepted_options(program) - {"-?"} <= page_tags(page_source(page_of(program)))


@pytest.mark.parametrize("page", [page_of(p) for p in PROGRAMS] + ["tracekitd.conf.5"])
def test_page_renders_without_warnings(page):
    r = render(MAN / page)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    name = page.rsplit(".", 1)[0]
    assert r.stdout.startswith(f"{name.upper()}({page[-1]})")
    assert re.search(rf"^NAME\n +{re.escape(name)} +[-\u2010] +\S", r.stdout, re.M), r.stdout[:300]


def test_page_says_what_the_tool_says():
    text = render(MAN / "tracekit-execsnoop.8").stdout
    assert "tracekit-execsnoop - Trace exec() syscalls, successful and failed\n" in text
    assert re.search(r"^SYNOPSIS\n +tracekit execsnoop \[OPTION\.\.\.\] \[-- COMMAND \[ARG\.\.\.\]\]\n"
                     r" +execsnoop \[OPTION\.\.\.\] \[-- COMMAND \[ARG\.\.\.\]\]$", text, re.M), text
    assert re.search(r"^ +-l, --line=STR\n +Only execs whose arguments contain STR$", text, re.M)
    assert re.search(r"^EXAMPLES\n +execsnoop +# trace all execs$", text, re.M)
    assert re.search(r"^ +execsnoop -l --verbose # only execs with \"--verbose\" among the args$",
                     text, re.M)
    assert re.search(r"^tracekit \S+ +\d{4}-\d\d-\d\d +TRACEKIT-EXECSNOOP\(8\)$", text, re.M)
    front = render(MAN / "tracekit.8").stdout
    assert re.search(r"^ +list \[-j\] \[-v\] \[--no-check\] \[--parallel N\]\n +Every +tool:",
                     front, re.M), front


def conf_keys_tracekitd_knows():
    """{section: keys} from tracekitd's own errors for an unknown key,
    which list the keys it knows."""
    known = {}
    for section in ("tracekitd", "collectors"):
        conf = BIN.parent / f"unknown-{section}.conf"
        conf.write_text(f"[{section}]\nno_such_key = 1\n")
        r = run("tracekitd", "--check-config", "-C", conf)
        conf.unlink()
        m = re.search(r"\(([\w, ;]+)\)$", r.stderr.strip())
        assert r.returncode == 1 and m, r.stderr
        known[section] = set(re.split(r"[,;] ", m.group(1)))
    return known


def conf_page_keys():
    """{section: {key: default}} from tracekitd.conf(5)."""
    keys, section = {}, None
    for line in page_source("tracekitd.conf.5").splitlines():
        m = re.fullmatch(r"\.SH \[(\w+)\]", line)
        if m:
            section = keys.setdefault(m.group(1), {})
        m = re.fullmatch(r"\.B (\S+) =(?: (.*))?", line)
        if m and section is not None:
            section[m.group(1).replace("\\-", "-")] = (m.group(2) or "").replace("\\-", "-")
    return keys


def test_conf_page_has_every_key_tracekitd_knows():
    page = conf_page_keys()
    assert {s: set(k) for s, k in page.items()} == conf_keys_tracekitd_knows()


def test_conf_page_values_are_accepted(tmp_path):
    conf = tmp_path / "page.conf"
    conf.write_text("".join(f"[{s}]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items())
                            for s, keys in conf_page_keys().items()))
    r = run("tracekitd", "--check-config", "-C", conf)
    assert r.returncode == 0, (r.stderr, conf.read_text())


# ---- bash completion ----

def complete(*words):
    """COMPREPLY for the last of words, as bash would complete it."""
    script = f"""
source {COMPLETION}
COMP_WORDS=({" ".join(f"'{w}'" for w in words)})
COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))
f=$(complete -p {words[0]} | sed 's/.* -F \\([^ ]*\\) .*/\\1/')
$f {words[0]} "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    r = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return [w for w in r.stdout.splitlines() if w]


@pytest.mark.parametrize("program", ARGP_PROGRAMS)
def test_completion_offers_every_option(program):
    offered = set(complete(program, "-")) | set(complete(program, "--"))
    assert offered == accepted_options(program) - {"-?"}


def test_front_command_completes_tools_commands_and_their_options():
    tools = [p for p in PROGRAMS if p not in ("tracekit", "tracekitd", "tracekit-doctor")]
    assert sorted(complete("tracekit", "")) == \
        sorted(["list", "doctor", "help", "--version", "--help"] + tools)
    assert complete("tracekit", "runq") == ["runqlat", "runqlen", "runqslower"]
    assert complete("tracekit", "help", "exi") == ["exitsnoop"]
    assert set(complete("tracekit", "execsnoop", "--")) == \
        {o for o in accepted_options("execsnoop") if o.startswith("--")}
    assert set(complete("tracekit", "doctor", "--")) == \
        {o for o in accepted_options("tracekit-doctor") if o.startswith("--")}
    assert complete("tracekit", "list", "--no") == ["--no-check"]


def test_option_values_complete_by_kind(tmp_path):
    (tmp_path / "conf-a").write_text("")
    assert complete("execsnoop", "--output", str(tmp_path / "conf")) == [str(tmp_path / "conf-a")]
    assert complete("execsnoop", f"--output={tmp_path}/conf") == [str(tmp_path / "conf-a")]
    assert "root" in complete("execsnoop", "-u", "ro")
    assert str(os.getpid()) in complete("execsnoop", "-p", str(os.getpid()))
    assert complete("execsnoop", "--max-args", "") == []   # a number: nothing to offer
    assert "/bin/true" in complete("execsnoop", "--", "/bin/tru")
    assert complete("execsnoop", "--", "true", "--pri") == []   # COMMAND's own arguments
