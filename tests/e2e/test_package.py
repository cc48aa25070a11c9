"""The Debian packages (make package): built from a clean copy of the
tracked files, lintian without errors, and installed for real beside
Debian's libbpf-tools and bpfcc-tools, which own the tools' bare names.

The installation happens in a private mount namespace whose /usr, /etc
and /var are overlays of the machine's: dpkg, its maintainer scripts and
man-db's trigger run as on a real system, and nothing is left once the
namespace ends."""
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, ROOT, makefile_version, run

PEERS = ("libbpf-tools", "bpfcc-tools")


@pytest.fixture(scope="module")
def debs(tmp_path_factory):
    # make check builds them where make package would (TRACEKIT_PACKAGE_DIR):
    # CI's make check-systemd then installs these rather than build again.
    out = Path(os.environ.get("TRACEKIT_PACKAGE_DIR") or tmp_path_factory.mktemp("package"))
    r = subprocess.run(["make", "-s", "-C", str(ROOT), f"PACKAGE_DIR={out}", "package"],
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    lint = [l for l in (r.stdout + r.stderr).splitlines() if re.match(r"[EW]: ", l)]
    return out, lint


def deb(out, name):
    return out / f"{name}_{makefile_version()}_amd64.deb"


def field(path, name):
    return subprocess.run(["dpkg-deb", "-f", str(path), name], capture_output=True,
                          text=True, check=True).stdout.strip()


def contents(path):
    """{path: symlink target or None} of a .deb."""
    lines = subprocess.run(["dpkg-deb", "-c", str(path)], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    files = {}
    for line in lines:
        name = line.split(None, 5)[5]
        target = None
        if " -> " in name:
            name, target = name.split(" -> ")
        if not name.endswith("/"):
            files[name[1:]] = target
    return files


def test_lintian_finds_no_error(debs):
    _, lint = debs
    assert not [l for l in lint if l.startswith("E: ")], lint


def test_two_packages_of_the_makefiles_version(debs):
    out, _ = debs
    for name in ("tracekit", "tracekitd"):
        assert field(deb(out, name), "Version") == makefile_version()
        # ${shlibs:Depends}: computed from what the binaries link.
        depends = field(deb(out, name), "Depends")
        assert re.search(r"\blibc6 \(>= [\d.]+\)", depends) and "libelf1" in depends, depends
    assert "libmicrohttpd12" in field(deb(out, "tracekitd"), "Depends")
    assert "libmicrohttpd" not in field(deb(out, "tracekit"), "Depends")


def test_what_each_package_holds(debs):
    out, _ = debs
    tools = contents(deb(out, "tracekit"))
    programs = sorted(p.name for p in BIN.iterdir() if p.name != "tracekitd")
    assert sorted(p[len("/usr/lib/tracekit/"):] for p in tools
                  if p.startswith("/usr/lib/tracekit/")) == programs
    assert tools["/usr/sbin/tracekit"] == "../lib/tracekit/tracekit"
    assert tools["/usr/sbin/tracekit-doctor"] == "../lib/tracekit/tracekit-doctor"
    assert not [p for p in tools if p.startswith("/usr/sbin/") and
                p not in ("/usr/sbin/tracekit", "/usr/sbin/tracekit-doctor")]
    pages = {p for p in tools if p.startswith("/usr/share/man/man8/")}
    assert "/usr/share/man/man8/tracekit-execsnoop.8.gz" in pages
    assert len(pages) == len(programs), pages
    assert "/usr/share/bash-completion/completions/tracekit" in tools
    daemon = contents(deb(out, "tracekitd"))
    for f in ("/usr/sbin/tracekitd", "/lib/systemd/system/tracekitd.service",
              "/etc/tracekit/tracekitd.conf", "/usr/share/man/man8/tracekitd.8.gz",
              "/usr/share/man/man5/tracekitd.conf.5.gz"):
        assert f in daemon, f
    ctl = subprocess.run(["dpkg-deb", "--ctrl-tarfile", str(deb(out, "tracekitd"))],
                         capture_output=True, check=True).stdout
    assert subprocess.run(["tar", "-xOf", "-", "./conffiles"], input=ctl,
                          capture_output=True).stdout == b"/etc/tracekit/tracekitd.conf\n"
    # It runs as root with a bounded capability set: no system user.
    postinst = subprocess.run(["tar", "-xOf", "-", "./postinst"], input=ctl,
                              capture_output=True).stdout.decode()
    assert "adduser" not in postinst and "useradd" not in postinst


INSTALL = r"""
set -e
for d in usr etc var; do
    mkdir -p "$OV/$d.upper" "$OV/$d.work"
    mount -t overlay overlay -o "lowerdir=/$d,upperdir=$OV/$d.upper,workdir=$OV/$d.work" "/$d"
done
dpkg -i "$@" > "$OV/dpkg.log" 2>&1 || { cat "$OV/dpkg.log"; exit 1; }
echo "owner /usr/sbin/execsnoop: $(dpkg -S /usr/sbin/execsnoop)"
echo "owner /usr/sbin/execsnoop-bpfcc: $(dpkg -S /usr/sbin/execsnoop-bpfcc)"
echo "owner /usr/sbin/tracekit: $(dpkg -S /usr/sbin/tracekit)"
echo "status: $(dpkg-query -W -f='${Package}=${db:Status-Abbrev};' tracekit tracekitd libbpf-tools bpfcc-tools)"
echo "version: $(/usr/sbin/tracekit --version | head -1)"
/usr/sbin/tracekit list --no-check -j | grep -c '"type":"tool"' | sed 's/^/tools: /'
echo "man: $(man -w tracekit-execsnoop) $(man -w tracekitd.conf)"
echo "doctor tools: $(/usr/sbin/tracekit-doctor --no-tools -j | head -c 18)"
dpkg --purge tracekit tracekitd > "$OV/purge.log" 2>&1 || { cat "$OV/purge.log"; exit 1; }
echo "after purge: $(ls /usr/lib/tracekit /etc/tracekit 2>&1 | tr '\n' ' ')"
"""


def test_installs_beside_libbpf_tools_and_bpfcc_tools(debs, tmp_path):
    out, _ = debs
    for peer in PEERS:   # installed by make deps
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", peer], capture_output=True,
                           text=True)
        assert r.stdout == "install ok installed", f"{peer} is not installed: run make deps"
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "env", f"OV={tmp_path}",
                        "sh", "-c", INSTALL, "sh", str(deb(out, "tracekit")),
                        str(deb(out, "tracekitd"))], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.stdout, r.stderr)
    got = dict(l.split(": ", 1) for l in r.stdout.splitlines())
    assert got["owner /usr/sbin/execsnoop"] == "libbpf-tools: /usr/sbin/execsnoop"
    assert got["owner /usr/sbin/execsnoop-bpfcc"] == "bpfcc-tools: /usr/sbin/execsnoop-bpfcc"
    assert got["owner /usr/sbin/tracekit"] == "tracekit: /usr/sbin/tracekit"
    assert sorted(got["status"].rstrip(";").split(";")) == \
        sorted(f"{p}=ii " for p in ("tracekit", "tracekitd", "libbpf-tools", "bpfcc-tools"))
    assert got["version"] == f"tracekit {makefile_version()}"
    assert int(got["tools"]) == len(run("tracekit", "list", "--no-check", "-j").stdout.splitlines())
    assert got["man"] == ("/usr/share/man/man8/tracekit-execsnoop.8.gz "
                          "/usr/share/man/man5/tracekitd.conf.5.gz")
    assert got["doctor tools"] == '{"type":"doctor","'
    assert "No such file or directory" in got["after purge"], got["after purge"]
