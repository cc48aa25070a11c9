"""tests/systemd runs inside make check-systemd, which boots the VM and
names its agent's socket in TK_GUEST_SOCKET (tests/systemd/README.md)."""
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))   # promtext

from guest import Guest  # noqa: E402

# Booting Debian under TCG takes about a minute; twice that on a busy host.
BOOT_TIMEOUT = 600


@pytest.fixture(scope="session")
def guest():
    path = os.environ.get("TK_GUEST_SOCKET")
    if not path:
        pytest.skip("needs the VM that make check-systemd boots (TK_GUEST_SOCKET unset)")
    g = Guest(path, os.environ.get("TK_GUEST_CONSOLE"))
    g.connect()
    g.wait_up(BOOT_TIMEOUT)
    yield g
    g.close()
