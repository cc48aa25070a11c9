#!/bin/bash
# Runs inside a check-vm guest (tests/vm/check-vm.py boots it with vng):
# checks what the end-to-end suite needs, then runs it as `make check-e2e`
# does. RES is the host directory shared read-write with the guest: it
# holds pytest-args (one argument per line) and receives junit.xml, rc and,
# if the guest lacks something, env-problems. The rest of the host's
# filesystem is seen read-only; vng puts overlays on /tmp, /etc, /var, ...
#   guest.sh RES BIN
set -u
res=$1 bin=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1

problems=()
problem() { problems+=("$*"); echo "guest: PROBLEM: $*"; }

echo "guest: kernel $(uname -r), $(nproc) CPUs," \
	"$(awk '/^MemTotal/ { printf "%d MB", $2 / 1024 }' /proc/meminfo)," \
	"uid $(id -u)"

[ "$(id -u)" = 0 ] || problem "not root"
[ -r /sys/kernel/btf/vmlinux ] || problem "no /sys/kernel/btf/vmlinux"

# vng mounts debugfs, tracefs and cgroup2 (at /sys/fs/cgroup); mount
# whatever a future vng would leave out. The tools mount tracefs
# themselves, and a test unmounts it to check that.
mountpoint -q /sys/kernel/debug ||
	mount -t debugfs debugfs /sys/kernel/debug || problem "cannot mount debugfs"
mountpoint -q /sys/kernel/tracing ||
	mount -t tracefs tracefs /sys/kernel/tracing || problem "cannot mount tracefs"
if ! awk '$3 == "cgroup2" { found = 1 } END { exit !found }' /proc/mounts; then
	mount -t cgroup2 cgroup2 /sys/fs/cgroup || problem "cannot mount cgroup2"
fi

ip link set dev lo up || problem "cannot bring up lo"
ip -o addr show dev lo | grep -q "inet 127.0.0.1/" || problem "lo has no 127.0.0.1"

tmp=$(mktemp /tmp/check-vm.XXXXXX) && rm -f "$tmp" || problem "/tmp is not writable"
[ -w "$res" ] || problem "$res is not writable"
[ -x "$bin/execsnoop" ] || problem "$bin/execsnoop is not there"

echo "guest: mounts:"
awk '$3 ~ /^(tracefs|debugfs|cgroup2?|bpf|tmpfs|overlay|9p|virtiofs)$/ { print "  " $2 " " $3 }' /proc/mounts
# /tmp is of the guest's memory: a test that leaves big files there fills
# it for every test after (ENOSPC); the use at the end tells.
echo "guest: /tmp at the start: $(df -h --output=used,size /tmp | tail -1)"

if [ ${#problems[@]} -gt 0 ]; then
	printf '%s\n' "${problems[@]}" > "$res/env-problems"
fi

# Extra pytest arguments; naming test files or directories (tests/...)
# replaces the default tests/e2e.
args=()
if [ -s "$res/pytest-args" ]; then
	mapfile -t args < "$res/pytest-args"
fi
where=(tests/e2e)
for a in "${args[@]}"; do
	[ -e "${a%%::*}" ] && [[ $a == tests/* ]] && where=()
done

# The host's tree is read-only here: no .pytest_cache, no __pycache__.
export PYTHONDONTWRITEBYTECODE=1
export TRACEKIT_BIN=$bin
echo "guest: TRACEKIT_BIN=$bin /usr/bin/python3 -m pytest -v ${where[*]} ${args[*]}"
start=$(date +%s)
/usr/bin/python3 -m pytest -v -p no:cacheprovider --junitxml="$res/junit.xml" \
	"${where[@]}" "${args[@]}"
rc=$?
echo "guest: pytest exit $rc after $(( $(date +%s) - start )) s"
echo "guest: /tmp at the end: $(df -h --output=used,size /tmp | tail -1)"
echo "$rc" > "$res/rc"
sync
exit "$rc"
