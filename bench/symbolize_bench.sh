#!/bin/sh
# Build and run bench/symbolize_bench.c (see there) against libtrace.a.
#   bench/symbolize_bench.sh [BUILD_DIR [LIB [STACKS [DEPTH]]]]
# BUILD_DIR defaults to build; LIB to libLLVM-14, else the largest .so
# under /usr/lib. Needs root (the child's /proc/PID/map_files); installs
# nothing, but compares with eu-addr2line (elfutils) when present.
set -e
cd "$(dirname "$0")/.."
build=${1:-build}
lib=${2:-/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1}
if [ ! -e "$lib" ]; then
	lib=$(find /usr/lib /lib -name '*.so*' -type f -printf '%s %p\n' 2>/dev/null |
		sort -n | tail -1 | cut -d' ' -f2)
fi
make --no-print-directory BUILD="$build" "$build/obj/libtrace.a" >/dev/null
mkdir -p "$build/bench"
${CC:-cc} -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -iquote libtrace \
	bench/symbolize_bench.c "$build/obj/libtrace.a" \
	-Wl,-Bstatic -lbpf -Wl,-Bdynamic -ldw -lelf -lz -lcap-ng \
	-o "$build/bench/symbolize_bench"
exec "$build/bench/symbolize_bench" "$lib" ${3:-100000} ${4:-20}
