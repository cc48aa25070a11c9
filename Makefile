# tracekit: libbpf CO-RE tracing tools.
#   make            build every tool into build/bin/
#   make check      unit tests (cmocka) and end-to-end tests (pytest, as root)
#   make check-vm   the end-to-end tests under Debian's kernels 5.10, 6.1 and
#                   6.12 in QEMU (TCG; tests/vm/): one line per kernel.
#                   Kernels are fetched once into $(BUILD)/vm/kernels/.
#                   Only tests marked kernel (their result can differ
#                   between kernels) unless VM_SCOPE=all; every kernel
#                   but the oldest (5.10), when older than the host's,
#                   only those of them the host's make check did not
#                   pass; 5.10 too in the files whose tools take no
#                   path of their own there (tests/e2e/kernel_paths.py).
#                   VM_KERNELS="6.1" picks kernels; VM_PYTEST_ARGS="-k x"
#                   passes pytest arguments (tests/vm/check-vm.py: more)
#   make ARCH=arm64 [STATIC=1]
#                   cross-build every program for arm64 into build/arm64/
#                   (make deps ARCH=arm64 installs the cross compiler and the
#                   arm64 libraries)
#   make check-unit ARCH=arm64
#                   the cross-built unit tests, run here under qemu-user
#   make check-vm ARCH=arm64
#                   the end-to-end tests marked kernel or portable under
#                   Debian's arm64 6.1 and 6.12 in qemu-system-aarch64, on
#                   an arm64 Debian root (tests/vm/check-vm-arm64.py);
#                   VM_SCOPE=arch (CI's): only the files whose tools take
#                   an arm64 path of their own (conftest.ARCH_DEPENDENT)
#   make check-repeat N=10 [LOAD=1] [VM=1]
#                   the suite N times (VM=1: make check-vm N times), then a
#                   table of every test that failed in any run; LOAD=1 runs
#                   a CPU hog per core and a disk writer beside it
#                   (tests/repeat.py; runs kept in $(BUILD)/repeat/)
#   make check-systemd
#                   tracekitd's .debs installed and run under systemd as
#                   PID 1 in a minimal Debian (debootstrap, cached in
#                   $(BUILD)/systemd/) booted with 6.1 and 6.12 in QEMU
#                   (tests/systemd/); SYSTEMD_KERNELS picks kernels
#   make STATIC=1   every program linked statically (glibc too) into
#                   $(BUILD)/static/bin/, to copy alone to a machine that
#                   has none of the libraries; `make static` does the same
#   make deps       install the Debian packages that build and tests need
#   make package    the Debian packages tracekit and tracekitd (debian/),
#                   checked by lintian, into $(BUILD)/package/
#   make install    the tools, tracekitd, its unit and default config, the
#                   man pages and bash completion
#                   (PREFIX=/usr/local, DESTDIR for staging)
#   make fuzz       fuzz the JSON escaper, the symbol-file parsers, the
#                   function matcher, the probe language's parser, the
#                   USDT note parser and tracekitd's config reader
#                   (libFuzzer, ASan+UBSan; FUZZ_TIME seconds each)

# ARCH=arm64 (or aarch64) on an x86_64 machine cross-builds into
# build/arm64/ with Debian's aarch64-linux-gnu-gcc against the arm64
# libraries of multiarch (`make deps ARCH=arm64` installs both).
HOST_ARCH := $(shell uname -m)
ARCH ?= $(HOST_ARCH)
override ARCH := $(patsubst aarch64,arm64,$(ARCH))
GNU_ARCH := $(patsubst arm64,aarch64,$(ARCH))
BPF_ARCH := $(patsubst x86_64,x86,$(ARCH))
VMLINUX_ARCH := $(ARCH)
ifneq ($(GNU_ARCH),$(HOST_ARCH))
CROSS := 1
CROSS_COMPILE ?= $(GNU_ARCH)-linux-gnu-
CC := $(CROSS_COMPILE)gcc
AR := $(CROSS_COMPILE)ar
BUILD := build/$(ARCH)
else
BUILD := build
endif
OBJ := $(BUILD)/obj
BIN := $(BUILD)/bin

CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
PYTHON ?= /usr/bin/python3

# One version for every tool (TOOL --version, tracekit --version).
VERSION := 0.1.0

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -MMD -MP \
	-iquote libtrace -iquote bpf -iquote $(OBJ)
LDLIBS := -Wl,--as-needed -Wl,-Bstatic -lbpf -Wl,-Bdynamic -ldw -lelf -lz -lcap-ng -lm -lresolv
# The multiarch include directory, after the rest: libbpf's usdt.bpf.h
# includes <linux/errno.h>, which includes <asm/errno.h>. Debian's tuple,
# not `$(CC) -print-multiarch`: make reads this before `make deps` has
# installed a cross compiler, and an empty answer left the BPF objects
# without <asm/errno.h> on a machine new to ARCH=arm64.
MULTIARCH := $(GNU_ARCH)-linux-gnu
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall \
	-I vmlinux/$(VMLINUX_ARCH) -Ibpf -idirafter /usr/include/$(MULTIARCH) -MMD -MP

TOOLS := $(patsubst bpf/%.bpf.c,%,$(wildcard bpf/*.bpf.c))
# Tools without a BPF object of their own (tracekit-doctor).
PLAIN_TOOLS := $(filter-out $(TOOLS),$(patsubst tools/%.c,%,$(wildcard tools/*.c)))
# fsslower and fsdist under the names that choose a file system
# (ext4slower, xfsdist, ...): symbolic links to them.
FS_TYPES := ext4 xfs btrfs nfs
FS_ALIASES := $(foreach t,$(FS_TYPES),$(t)slower $(t)dist)
LIBTRACE_SRC := $(wildcard libtrace/*.c libtrace/*/*.c)
LIBTRACE_OBJ := $(patsubst libtrace/%.c,$(OBJ)/libtrace/%.o,$(LIBTRACE_SRC)) \
	$(OBJ)/libtrace/syscall_table.o
LIBTRACE := $(OBJ)/libtrace.a

DEPS_PKGS := gcc libc6-dev clang llvm bpftool libbpf-dev libelf-dev \
	zlib1g-dev linux-libc-dev libcmocka-dev python3-pytest man-db \
	libclang-rt-14-dev libbpf-tools libcap-ng-dev libdw-dev \
	xz-utils binutils elfutils e2fsprogs xfsprogs btrfs-progs \
	libmicrohttpd-dev libsystemd-dev libinih-dev prometheus systemd \
	libyaml-dev libcrypt-dev apache2-utils openssl \
	qemu-system-x86 udev busybox-static strace linux-perf dmsetup kmod \
	nfs-kernel-server nfs-common iproute2 procps valgrind \
	debhelper lintian bpfcc-tools debootstrap
# The static archives STATIC=1 links, and the headers of p11-kit's
# stand-ins (tools/tracekitd/static/).
DEPS_PKGS += liblzma-dev libbz2-dev libgnutls28-dev nettle-dev libgmp-dev \
	libtasn1-6-dev libidn2-dev libunistring-dev libp11-kit-dev
# A cross build's compiler, and the libraries it links in the target's
# architecture (multiarch: /usr/lib/$(GNU_ARCH)-linux-gnu).
CROSS_LIBS := libc6-dev libbpf-dev libelf-dev libdw-dev zlib1g-dev libcap-ng-dev \
	libmicrohttpd-dev libsystemd-dev libinih-dev liblzma-dev libbz2-dev libgnutls28-dev \
	nettle-dev libgmp-dev libtasn1-6-dev libidn2-dev libunistring-dev libp11-kit-dev \
	libyaml-dev libcrypt-dev libcmocka-dev
ifeq ($(CROSS),1)
DEPS_PKGS += gcc-$(GNU_ARCH)-linux-gnu $(addsuffix :$(ARCH),$(CROSS_LIBS))
# make check-vm ARCH=arm64: the VM, and the arm64 root's programs run here
# (debootstrap, mkinitramfs) through qemu-user-static.
DEPS_PKGS += qemu-system-arm qemu-user-static
endif

.PHONY: all deps check check-unit check-e2e fuzz clean install
.DELETE_ON_ERROR:

PROGRAMS := $(TOOLS) $(PLAIN_TOOLS) $(FS_ALIASES) tracekitd
# Man pages and completion come from running the programs: not in a
# cross build, whose programs this machine cannot run.
ifeq ($(STATIC),1)
all: deps-stamp static
else ifeq ($(CROSS),1)
all: deps-stamp $(addprefix $(BIN)/,$(PROGRAMS))
else
all: deps-stamp $(addprefix $(BIN)/,$(PROGRAMS)) man completion
endif

# Man pages from each program's own --help, and tracekitd.conf(5) from the
# default configuration's comments (tools/man/): a page cannot drift from
# the code it describes.
MAN := $(BUILD)/man
# The date on the pages: a package build's SOURCE_DATE_EPOCH (its
# changelog's), else the last commit's.
MAN_DATE := $(shell { [ -n "$$SOURCE_DATE_EPOCH" ] && date -u -d @$$SOURCE_DATE_EPOCH +%F; } || \
	git log -1 --format=%cs 2>/dev/null || date +%F)
# A tool's page is tracekit-TOOL(8), as git-log(1) is `git log`'s: the
# tools run as `tracekit TOOL`, and Debian's libbpf-tools and bpfcc-tools
# own the bare names. The commands keep theirs.
COMMANDS := tracekit tracekit-doctor tracekitd
TOOL_PROGRAMS := $(filter-out $(COMMANDS),$(PROGRAMS))
TOOL_PAGES := $(patsubst %,$(MAN)/tracekit-%.8,$(TOOL_PROGRAMS))
COMMAND_PAGES := $(patsubst %,$(MAN)/%.8,$(COMMANDS))
MAN_PAGES := $(TOOL_PAGES) $(COMMAND_PAGES) $(MAN)/tracekitd.conf.5
man: $(MAN_PAGES)
$(TOOL_PAGES): $(MAN)/tracekit-%.8: $(BIN)/% tools/man/mkman.py | $(MAN)
	$(PYTHON) tools/man/mkman.py --front tracekit $< 8 $(VERSION) $(MAN_DATE) $@ \
		tracekit\(8\) tracekit-doctor\(8\)
SEE_ALSO_tracekit := tracekit-doctor\(8\) tracekitd\(8\)
SEE_ALSO_tracekit-doctor := tracekit\(8\) tracekitd\(8\)
SEE_ALSO_tracekitd := tracekitd.conf\(5\) tracekit\(8\)
$(COMMAND_PAGES): $(MAN)/%.8: $(BIN)/% tools/man/mkman.py | $(MAN)
	$(PYTHON) tools/man/mkman.py $< 8 $(VERSION) $(MAN_DATE) $@ $(SEE_ALSO_$*)
$(MAN)/tracekitd.conf.5: tools/tracekitd.conf tools/man/mkconfman.py tools/man/mkman.py | $(MAN)
	$(PYTHON) tools/man/mkconfman.py $< $(VERSION) $(MAN_DATE) $@
$(MAN):
	mkdir -p $@

# Bash completion of every program's options, from its --usage.
COMPLETION := $(BUILD)/completion/tracekit
completion: $(COMPLETION)
$(COMPLETION): $(addprefix $(BIN)/,$(PROGRAMS)) tools/completion/mkcompletion.py
	@mkdir -p $(@D)
	$(PYTHON) tools/completion/mkcompletion.py $@ $(addprefix $(BIN)/,$(PROGRAMS))
.PHONY: man completion

# Install only what is missing; a stamp keeps `make` quiet after the first run.
deps:
	@missing=""; for p in $(DEPS_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' \
			|| missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "make deps: installing$$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root to install$$missing" >&2; exit 1; fi; \
		$(if $(CROSS),dpkg --print-foreign-architectures | grep -qx $(ARCH) || \
			dpkg --add-architecture $(ARCH);) \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@mkdir -p $(BUILD) && touch $(BUILD)/.deps-stamp

deps-stamp: $(BUILD)/.deps-stamp
$(BUILD)/.deps-stamp: Makefile
ifeq ($(SKIP_DEPS),1)
	@# A package build: its Build-Depends are the deps (debian/control).
	@mkdir -p $(BUILD) && touch $@
else
	@$(MAKE) --no-print-directory deps
endif
.PHONY: deps-stamp

# BPF objects and their skeletons.
$(OBJ)/bpf/%.bpf.o: bpf/%.bpf.c | $(OBJ)/bpf
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	@# Drop DWARF (BTF stays) so skeletons embed a small object.
	llvm-strip -g $@

$(OBJ)/%.skel.h: $(OBJ)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# libtrace's own BPF objects (bpf/lib/), as skeletons lib_NAME.skel.h.
$(OBJ)/bpf/lib/%.bpf.o: bpf/lib/%.bpf.c | $(OBJ)/bpf
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -Ibpf/lib -c $< -o $@
	llvm-strip -g $@

$(OBJ)/lib_%.skel.h: $(OBJ)/bpf/lib/%.bpf.o
	$(BPFTOOL) gen skeleton $< name lib_$*_bpf > $@

$(OBJ)/libtrace/ksymbpf.o: $(OBJ)/lib_ksym.skel.h

# Syscall name tables, generated from this machine's kernel headers.
$(OBJ)/libtrace/syscall_table.c: libtrace/gen-syscall-table.sh | $(OBJ)/libtrace
	sh $< $(CC) > $@

$(OBJ)/libtrace/syscall_table.o: $(OBJ)/libtrace/syscall_table.c
	$(CC) $(CFLAGS) -c $< -o $@

$(OBJ)/libtrace/%.o: libtrace/%.c | $(OBJ)/libtrace
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

# Rebuilt when VERSION changes: the Makefile is a prerequisite.
$(OBJ)/libtrace/version.o: CFLAGS += -DTK_VERSION='"$(VERSION)"'
$(OBJ)/libtrace/version.o: Makefile

$(LIBTRACE): $(LIBTRACE_OBJ)
	$(AR) rcs $@ $^

# A tool's object depends on its skeleton; -MMD tracks the rest.
$(OBJ)/tools/%.o: tools/%.c $(OBJ)/%.skel.h | $(OBJ)/tools
	$(CC) $(CFLAGS) -c $< -o $@

$(addprefix $(OBJ)/tools/,$(addsuffix .o,$(PLAIN_TOOLS))): $(OBJ)/tools/%.o: tools/%.c | $(OBJ)/tools
	$(CC) $(CFLAGS) -c $< -o $@

$(BIN)/%: $(OBJ)/tools/%.o $(LIBTRACE) | $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(addprefix $(BIN)/,$(filter %slower,$(FS_ALIASES))): $(BIN)/%: $(BIN)/fsslower
	ln -sf fsslower $@
$(addprefix $(BIN)/,$(filter %dist,$(FS_ALIASES))): $(BIN)/%: $(BIN)/fsdist
	ln -sf fsdist $@

# tracekitd: tools/tracekitd/*.c over the skeletons of the tools it
# runs as collectors.
TRACEKITD_SKELS := syscount execsnoop runqlat tcpconnect vfsstat biolatency fsdist \
	tcpstates netqtop tcpdrop tcpretrans
TRACEKITD_SKELS += hardirqs softirqs cpudist runqlen
TRACEKITD_OBJ := $(patsubst tools/tracekitd/%.c,$(OBJ)/tracekitd/%.o,$(wildcard tools/tracekitd/*.c))
TRACEKITD_LIBS := -lmicrohttpd -lsystemd -linih -lyaml -lcrypt -lgnutls -lpthread

$(OBJ)/tracekitd/%.o: tools/tracekitd/%.c $(patsubst %,$(OBJ)/%.skel.h,$(TRACEKITD_SKELS)) | $(OBJ)/tracekitd
	$(CC) $(CFLAGS) -iquote tools/tracekitd -c $< -o $@

$(BIN)/tracekitd: $(TRACEKITD_OBJ) $(LIBTRACE) | $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TRACEKITD_LIBS)

# Static programs: the same objects, linked with -static into
# $(STATIC_BIN)/. Debian has no static libsystemd or p11-kit, so tracekitd
# links its own sd_notify (the documented protocol) and stand-ins for the
# p11-kit entry points GnuTLS names but tracekitd never reaches (PKCS#11
# tokens); each file says why.
STATIC_BIN := $(BUILD)/static/bin
STATIC_LDLIBS := -static -lbpf -ldw -lelf -lz -lbz2 -llzma -lcap-ng -lm -lresolv -lpthread
STATIC_TRACEKITD_LIBS := -lmicrohttpd -linih -lyaml -lcrypt -lgnutls -lhogweed -lnettle -lgmp \
	-ltasn1 -lidn2 -lunistring -latomic
# Every static program: users and groups from the files only (tools/static/).
STATIC_OBJ := $(patsubst tools/static/%.c,$(OBJ)/static/%.o,$(wildcard tools/static/*.c))
STATIC_TRACEKITD_OBJ := $(patsubst tools/tracekitd/static/%.c,$(OBJ)/tracekitd/static/%.o,\
	$(wildcard tools/tracekitd/static/*.c))
# glibc's warning that getpwnam() and the like need its shared NSS
# modules at run time is true only of sources other than files
# (/etc/passwd, which static glibc reads itself): said in the README.
static_link = out=$$($(CC) $(LDFLAGS) -o $@ $^ $(STATIC_LDLIBS) $(1) 2>&1); rc=$$?; \
	printf '%s\n' "$$out" | grep -v -e '^$$' -e ': in function' \
		-e 'in statically linked applications requires at runtime' >&2; exit $$rc

.PHONY: static
static: deps-stamp $(addprefix $(STATIC_BIN)/,$(PROGRAMS))

$(STATIC_BIN)/%: $(OBJ)/tools/%.o $(STATIC_OBJ) $(LIBTRACE) | $(STATIC_BIN)
	@echo "$(CC) -static -o $@"
	@$(call static_link)

$(addprefix $(STATIC_BIN)/,$(filter %slower,$(FS_ALIASES))): $(STATIC_BIN)/%: $(STATIC_BIN)/fsslower
	ln -sf fsslower $@
$(addprefix $(STATIC_BIN)/,$(filter %dist,$(FS_ALIASES))): $(STATIC_BIN)/%: $(STATIC_BIN)/fsdist
	ln -sf fsdist $@

$(OBJ)/static/%.o: tools/static/%.c | $(OBJ)/tools
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(OBJ)/tracekitd/static/%.o: tools/tracekitd/static/%.c | $(OBJ)/tracekitd
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -isystem /usr/include/p11-kit-1 -c $< -o $@

$(STATIC_BIN)/tracekitd: $(TRACEKITD_OBJ) $(STATIC_TRACEKITD_OBJ) $(STATIC_OBJ) $(LIBTRACE) | $(STATIC_BIN)
	@echo "$(CC) -static -o $@"
	@$(call static_link,$(STATIC_TRACEKITD_LIBS))

# Every compile waits for its directory, and so for `make deps`.
$(OBJ)/bpf $(OBJ)/libtrace $(OBJ)/tools $(OBJ)/tracekitd $(OBJ)/tests $(BIN) $(STATIC_BIN): | $(BUILD)/.deps-stamp
	mkdir -p $@

# Unit tests: one cmocka program per tests/unit/test_*.c.
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OBJ)/tests/%,$(wildcard tests/unit/test_*.c))

$(OBJ)/tests/%: tests/unit/%.c $(LIBTRACE) | $(OBJ)/tests
	$(CC) $(CFLAGS) -o $@ $< $(LIBTRACE) -lcmocka $(LDLIBS)

# tracekitd's web config parser, with the libraries it needs.
$(OBJ)/tests/test_webconfig: tests/unit/test_webconfig.c tools/tracekitd/webconfig.c | $(OBJ)/tests
	$(CC) $(CFLAGS) -iquote tools/tracekitd -o $@ $(filter %.c,$^) -lcmocka -lyaml -lcrypt -lgnutls

# A cross build's unit tests run here under qemu-user (qemu-user-static,
# with the target's libraries of multiarch under /): make check-unit
# ARCH=arm64. TK_UNIT_EMULATED tells the tests about this machine's own
# files (its ld.so.cache) that they are not the target's.
UNIT_RUNNER := $(if $(CROSS),TK_UNIT_EMULATED=1 qemu-$(GNU_ARCH)-static -L /)
RUN_UNIT = set -e; for t in $(UNIT_TESTS); do echo "== $$t"; $(UNIT_RUNNER) $$t; done
# The JUnit XML tells make check-vm which tests the host passed.
RUN_E2E = TRACEKIT_BIN=$(abspath $(BIN)) TRACEKIT_STATIC_BIN=$(abspath $(STATIC_BIN)) \
	TRACEKIT_PACKAGE_DIR=$(abspath $(PACKAGE_DIR)) \
	$(PYTHON) -m pytest -v \
	--junitxml=$(abspath $(BUILD))/e2e/junit.xml tests/e2e

check-unit: deps-stamp $(UNIT_TESTS)
	@$(RUN_UNIT)

check-e2e: all static
	$(RUN_E2E)

# Build in parallel, then run the suites one after the other.
check: all static $(UNIT_TESTS)
	@$(RUN_UNIT)
	$(RUN_E2E)

# The end-to-end tests under other kernels, booted with virtme-ng on this
# machine's userland (tests/vm/check-vm.py installs what is missing).
# VM_PYTEST_ARGS reaches it through the environment.
# ARCH=arm64: Debian's arm64 6.1 and 6.12 in qemu-system-aarch64, on the
# cross-built programs and an arm64 Debian root (tests/vm/check-vm-arm64.py).
.PHONY: check-vm
ifeq ($(CROSS),1)
VM_KERNELS ?= 6.1 6.12
check-vm: all static
	$(PYTHON) tests/vm/check-vm-$(ARCH).py --build build --kernels "$(VM_KERNELS)"
else
VM_KERNELS ?= 5.10 6.1 6.12
check-vm: all
	$(PYTHON) tests/vm/check-vm.py --build $(BUILD) --bin $(BIN) --kernels "$(VM_KERNELS)"
endif

# tracekitd's .debs in a Debian booted with systemd as PID 1, under each
# of SYSTEMD_KERNELS in QEMU (tests/systemd/check-systemd.py). The .debs:
# make package's, or SYSTEMD_DEBS=DIR's where they are already built.
SYSTEMD_KERNELS ?= 6.1 6.12
.PHONY: check-systemd
check-systemd: deps-stamp
	$(if $(SYSTEMD_DEBS),,$(MAKE) --no-print-directory package)
	$(PYTHON) tests/systemd/check-systemd.py --build $(BUILD) \
		--debs $(or $(SYSTEMD_DEBS),$(PACKAGE_DIR)) --kernels "$(SYSTEMD_KERNELS)"

# Flaky tests found by a command: the suite N times, one table at the end.
# REPEAT_ARGS: pytest arguments for the host runs (default tests/e2e).
N ?= 10
.PHONY: check-repeat
check-repeat: all static $(UNIT_TESTS)
	VM_KERNELS="$(VM_KERNELS)" $(PYTHON) tests/repeat.py --runs $(N) --build $(BUILD) \
		--bin $(BIN) $(if $(LOAD),--load) $(if $(VM),--vm) $(REPEAT_ARGS)

# libFuzzer (ASan+UBSan) over every tests/fuzz/fuzz_<name>.c, FUZZ_TIME
# seconds each; seeds in tests/fuzz/corpus-<name>/ (else tests/fuzz/corpus);
# what a fuzzer finds (crash-*, slow-unit-*) goes to $(BUILD)/fuzz-findings/<name>/.
.SECONDEXPANSION:
FUZZ_TIME ?= 60
FUZZERS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-Ilibtrace -Ibpf -Itools/tracekitd -D_GNU_SOURCE
# The libtrace sources each harness exercises.
fuzz_src_json := libtrace/json.c
fuzz_src_kallsyms := libtrace/symparse.c
fuzz_src_maps := libtrace/symparse.c
fuzz_src_perfmap := libtrace/symparse.c
fuzz_src_config := tools/tracekitd/config.c tools/tracekitd/webconfig.c
fuzz_src_funcmatch := libtrace/funcmatch.c libtrace/functarget.c libtrace/errf.c libtrace/procfile.c
fuzz_libs_funcmatch := -lelf
fuzz_libs_config := -linih -lyaml -lcrypt -lgnutls
fuzz_src_probe := libtrace/probe/lexer.c libtrace/probe/expr.c libtrace/probe/spec.c \
	libtrace/probe/argspec.c
fuzz_src_dns := libtrace/dns.c
fuzz_src_signals := libtrace/signames.c
fuzz_src_usdt := libtrace/usdt.c libtrace/errf.c
fuzz_libs_usdt := -lelf
fuzz_libs_dns := -lresolv

$(OBJ)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $$(fuzz_src_$$*) | $(OBJ)/fuzz
	$(CLANG) $(FUZZ_CFLAGS) $< $(fuzz_src_$*) -o $@ $(fuzz_libs_$*)

$(OBJ)/fuzz: | $(BUILD)/.deps-stamp
	mkdir -p $@

fuzz: deps-stamp $(addprefix $(OBJ)/fuzz/fuzz_,$(FUZZERS))
	@set -e; for f in $(FUZZERS); do \
		corpus=tests/fuzz/corpus-$$f; [ -d $$corpus ] || corpus=tests/fuzz/corpus; \
		mkdir -p $(BUILD)/fuzz-corpus/$$f $(BUILD)/fuzz-findings/$$f; \
		echo "== fuzz_$$f ($(FUZZ_TIME) s)"; \
		$(OBJ)/fuzz/fuzz_$$f -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
			-artifact_prefix=$(BUILD)/fuzz-findings/$$f/ \
			$(BUILD)/fuzz-corpus/$$f $$corpus; \
	done

# Comparisons with the peers; each writes its section of bench/RESULTS.md
# and prints it. `make bench` runs them all (the profile comparison takes
# about 10 minutes: bpftrace is slow); `make bench-NAME` runs one.
# The peers come from Debian, installed when missing (bcc's Python tools
# are tried: they need kernel headers, and say so where there are none).
BENCH_PKGS := libbpf-tools bpftrace strace bpfcc-tools time valgrind heaptrack
BENCHES := syscount storms startup runqlat symbolize profile churn trace unwind block net memleak cpu \
	sizes
BENCH_ENV := TRACEKIT_BIN=$(abspath $(BIN))
.PHONY: bench bench-deps $(addprefix bench-,$(BENCHES)) bench-targets
bench: $(addprefix bench-,$(BENCHES))
	@$(MAKE) --no-print-directory bench-targets
bench-deps: all
	@$(MAKE) --no-print-directory deps DEPS_PKGS="$(BENCH_PKGS)"
bench-syscount: bench-deps
	$(BENCH_ENV) $(PYTHON) bench/syscount_overhead.py --latency
bench-storms: bench-deps
	$(BENCH_ENV) $(PYTHON) bench/event_storm.py > $(BUILD)/bench-storms.md
	$(PYTHON) bench/results.py storms < $(BUILD)/bench-storms.md
bench-startup: bench-deps
	$(BENCH_ENV) $(PYTHON) bench/startup.py > $(BUILD)/bench-startup.md
	$(PYTHON) bench/results.py startup < $(BUILD)/bench-startup.md
bench-sizes: bench-deps static
	TRACEKIT_STATIC_BIN=$(abspath $(STATIC_BIN)) $(PYTHON) bench/sizes.py > $(BUILD)/bench-sizes.md
	$(PYTHON) bench/results.py sizes < $(BUILD)/bench-sizes.md
bench-runqlat: bench-deps
	$(BENCH_ENV) $(PYTHON) bench/runqlat_overhead.py > $(BUILD)/bench-runqlat.md
	$(PYTHON) bench/results.py runqlat < $(BUILD)/bench-runqlat.md
bench-symbolize: bench-deps
	{ printf '## Symbolization: 100,000 user stacks of a large library\n\n'; \
	  sh bench/symbolize_bench.sh $(BUILD); } > $(BUILD)/bench-symbolize.md
	$(PYTHON) bench/results.py symbolize < $(BUILD)/bench-symbolize.md
bench-profile: bench-deps
	$(PYTHON) bench/profile_cpu.py --bin $(abspath $(BIN)) --build $(BUILD) > $(BUILD)/bench-profile.md
	$(PYTHON) bench/results.py profile < $(BUILD)/bench-profile.md
bench-churn: bench-deps
	$(PYTHON) bench/tracekitd_churn.py --bin $(abspath $(BIN)) > $(BUILD)/bench-churn.md
	$(PYTHON) bench/results.py tracekitd-churn < $(BUILD)/bench-churn.md
bench-trace: bench-deps
	$(BENCH_ENV) $(PYTHON) bench/trace_oneliners.py > $(BUILD)/bench-trace.md
	$(PYTHON) bench/results.py trace < $(BUILD)/bench-trace.md
# --unwind fp|auto|cfi against perf --call-graph dwarf (perf from linux-perf).
bench-block: bench-deps
	$(BENCH_ENV) $(PYTHON) bench/block_overhead.py > $(BUILD)/bench-block.md
	$(PYTHON) bench/results.py block < $(BUILD)/bench-block.md
# tcplife, tcptop and tcpretrans on loopback transfers (bench/tcp_load.c).
bench-net: bench-deps
	$(BENCH_ENV) $(PYTHON) bench/net_overhead.py > $(BUILD)/bench-net.md
	$(PYTHON) bench/results.py net < $(BUILD)/bench-net.md
bench-memleak: bench-deps
	$(BENCH_ENV) $(PYTHON) bench/memleak_overhead.py > $(BUILD)/bench-memleak.md
	$(PYTHON) bench/results.py memleak < $(BUILD)/bench-memleak.md
# cpudist, runqlen, offwaketime (pingpong), hardirqs (O_DIRECT disk reads),
# softirqs (loopback stream): bench/cpu_overhead.py.
bench-cpu: bench-deps
	$(BENCH_ENV) $(PYTHON) bench/cpu_overhead.py > $(BUILD)/bench-cpu.md
	$(PYTHON) bench/results.py cpu < $(BUILD)/bench-cpu.md

bench-unwind: bench-deps
	$(PYTHON) bench/unwind_cpu.py --bin $(abspath $(BIN)) > $(BUILD)/bench-unwind.md
	$(PYTHON) bench/results.py unwind < $(BUILD)/bench-unwind.md
# The issue's targets, gathered from the sections above into one list.
bench-targets:
	$(PYTHON) bench/targets.py

PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR ?= /lib/systemd/system
# The tools live in TOOLDIR, off PATH: Debian's libbpf-tools owns
# /usr/sbin/execsnoop and the other bare names (bpfcc-tools has
# execsnoop-bpfcc). tracekit and tracekit-doctor are linked into sbin;
# they find the tools beside their own program, the link resolved.
TOOLDIR ?= $(PREFIX)/lib/tracekit
install: all
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(TOOLDIR) $(DESTDIR)$(SYSCONFDIR)/tracekit \
		$(DESTDIR)$(UNITDIR)
	install -m 755 $(addprefix $(BIN)/,$(TOOLS) $(PLAIN_TOOLS)) $(DESTDIR)$(TOOLDIR)/
	for a in $(filter %slower,$(FS_ALIASES)); do ln -sf fsslower $(DESTDIR)$(TOOLDIR)/$$a; done
	for a in $(filter %dist,$(FS_ALIASES)); do ln -sf fsdist $(DESTDIR)$(TOOLDIR)/$$a; done
	for c in tracekit tracekit-doctor; do \
		ln -sfr $(DESTDIR)$(TOOLDIR)/$$c $(DESTDIR)$(PREFIX)/sbin/$$c; done
	install -m 755 $(BIN)/tracekitd $(DESTDIR)$(PREFIX)/sbin/
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' tools/tracekitd.service > $(DESTDIR)$(UNITDIR)/tracekitd.service
	chmod 644 $(DESTDIR)$(UNITDIR)/tracekitd.service
	install -d $(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(PREFIX)/share/man/man5 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 $(filter %.8,$(MAN_PAGES)) $(DESTDIR)$(PREFIX)/share/man/man8/
	install -m 644 $(MAN)/tracekitd.conf.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	@# bash-completion loads a command's completion from a file of its name.
	install -m 644 $(COMPLETION) $(DESTDIR)$(PREFIX)/share/bash-completion/completions/tracekit
	ln -sf tracekit $(DESTDIR)$(PREFIX)/share/bash-completion/completions/tracekit-doctor
	@# An edited config survives a reinstall.
	[ -e $(DESTDIR)$(SYSCONFDIR)/tracekit/tracekitd.conf ] || \
		install -m 644 tools/tracekitd.conf $(DESTDIR)$(SYSCONFDIR)/tracekit/tracekitd.conf

# The Debian packages tracekit and tracekitd (debian/), built as
# dpkg-buildpackage builds them from a clean checkout: from a copy of the
# tracked files in PACKAGE_DIR/src; the .debs land in PACKAGE_DIR, and
# lintian must find no error in them.
PACKAGE_DIR ?= $(BUILD)/package
package:
	rm -rf $(PACKAGE_DIR) && mkdir -p $(PACKAGE_DIR)/src
	git ls-files -z | xargs -0 cp --parents -t $(PACKAGE_DIR)/src
	cd $(PACKAGE_DIR)/src && dpkg-buildpackage -us -uc -b -jauto $(PACKAGE_OPTS)
	lintian --fail-on error $(PACKAGE_DIR)/*.changes
.PHONY: package

clean:
	rm -rf $(BUILD)

# Two levels: libtrace/probe/ keeps its objects in a subdirectory.
-include $(wildcard $(OBJ)/*/*.d $(OBJ)/*/*/*.d)

# Keep generated skeletons and BPF objects between runs.
.SECONDARY:
