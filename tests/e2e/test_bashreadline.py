"""bashreadline end to end: an interactive bash the test drives through a
pseudo-terminal; the tool must report exactly the lines typed into it,
an empty one too, and nothing of a bash that is not named bash."""
import os
import pty
import select
import subprocess
import time
import uuid

import pytest

from conftest import Tool, json_lines, loss_record, run


class Bash:
    """bash -i on a pty, without rc files, its prompt a marker; type()
    sends a line and waits for the next prompt (the line was read)."""
    PROMPT = "tk-prompt> "

    def __init__(self, argv0="bash"):
        self.master, slave = pty.openpty()
        env = {"PATH": os.environ["PATH"], "PS1": self.PROMPT, "TERM": "dumb",
               "HOME": "/", "HISTFILE": "/dev/null"}
        self.proc = subprocess.Popen(["/bin/bash", "--norc", "--noprofile", "-i"],
                                     executable="/bin/bash", stdin=slave, stdout=slave,
                                     stderr=slave, env=env, start_new_session=True)
        os.close(slave)
        self.buf = b""
        self.prompts = 0
        self.wait_prompt()

    def wait_prompt(self, timeout=60):
        want = self.prompts + 1
        deadline = time.monotonic() + timeout
        while self.buf.count(self.PROMPT.encode()) < want:
            left = deadline - time.monotonic()
            assert left > 0, self.buf
            r, _, _ = select.select([self.master], [], [], left)
            if r:
                self.buf += os.read(self.master, 4096)
        self.prompts = want

    def type(self, line):
        os.write(self.master, line.encode() + b"\r")
        self.wait_prompt()

    def close(self):
        os.write(self.master, b"exit\r")
        self.proc.wait(timeout=60)
        os.close(self.master)


def test_text_columns_exact_lines():
    marker = uuid.uuid4().hex[:8]
    b = Bash()
    try:
        with Tool("bashreadline", "-p", str(b.proc.pid)) as t:
            b.type(f"echo tk-{marker}")
            b.type("")
            b.type(f"true 'two  spaces' {marker}")
            out, err, rc = t.stop()
    finally:
        b.close()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "TIME      PID     COMMAND"
    assert [l[10:] for l in lines[1:]] == [f"{b.proc.pid:<7} echo tk-{marker}",
                                           f"{b.proc.pid:<7} ",
                                           f"{b.proc.pid:<7} true 'two  spaces' {marker}"]
    assert all(l[2] == ":" and l[5] == ":" for l in lines[1:])


@pytest.mark.kernel
def test_json_every_bash_and_end_of_input():
    """Two shells at once, the tool on all of them: each one's lines, and
    Ctrl-D's end of input (readline returns NULL) as "line": null."""
    marker = uuid.uuid4().hex[:8]
    a, b = Bash(), Bash()
    try:
        with Tool("bashreadline", "-j") as t:
            a.type(f"echo a-{marker}")
            b.type(f"echo b-{marker}")
            a.type(f": {'x' * 300}")
            os.write(b.master, b"\x04")   # Ctrl-D: bash exits
            b.proc.wait(timeout=60)
            out, err, rc = t.stop()
    finally:
        a.close()
        if b.proc.poll() is None:
            b.close()
    assert rc == 0, err
    records = json_lines(out)
    mine = [(r["pid"], r["line"], r["truncated"]) for r in records
            if r.get("type") == "readline" and r["pid"] in (a.proc.pid, b.proc.pid)]
    assert mine == [(a.proc.pid, f"echo a-{marker}", False),
                    (b.proc.pid, f"echo b-{marker}", False),
                    (a.proc.pid, ": " + "x" * 253, True),
                    (b.proc.pid, None, False)]
    assert {r["comm"] for r in records if r.get("type") == "readline"} == {"bash"}
    assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                    "map_inserts_failed": 0}


@pytest.mark.parametrize("args,words", [
    (["-s", "/nonexistent/libreadline.so"], ["--shared", "/nonexistent/libreadline.so"]),
    (["-s", "/bin/true"], ["--shared", "readline"]),
    (["7"], ["'7'"]),
])
def test_usage_errors(args, words):
    r = run("bashreadline", *args)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("bashreadline: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
