"""--version: one version for every program tracekit builds (the tools,
their file-system aliases, tracekit-doctor and tracekitd), the Makefile's
VERSION, with the libbpf each is linked with."""
import os
import re

import pytest

from conftest import BIN, makefile_version, run


PROGRAMS = sorted(p for p in os.listdir(BIN) if os.access(os.path.join(BIN, p), os.X_OK))


def test_every_program_is_checked():
    assert {"execsnoop", "ext4slower", "tracekit", "tracekit-doctor", "tracekitd"} <= set(PROGRAMS)


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(program, flag):
    r = run(program, flag)
    out, err, rc = r.stdout, r.stderr, r.returncode
    assert (rc, err) == (0, ""), err
    # The front command is tracekit itself: "tracekit VERSION".
    name = "tracekit" if program == "tracekit" else rf"{re.escape(program)} \(tracekit\)"
    assert re.fullmatch(rf"{name} {re.escape(makefile_version())}\n"
                        r"libbpf \d+\.\d+\n", out), out


# tracekitd's usage errors exit EX_USAGE (64), the tools' 2.
@pytest.mark.parametrize("program, status", [("execsnoop", 2), ("tracekitd", 64)])
def test_version_takes_no_value(program, status):
    r = run(program, "--version=1")
    out, err, rc = r.stdout, r.stderr, r.returncode
    assert rc == status and out == "" and "--version" in err, err
