build-opensnoop/obj/bpf/opensnoop.bpf.o: bpf/opensnoop.bpf.c \
  vmlinux/x86_64/vmlinux.h bpf/opensnoop.h bpf/tk_shared.h \
  bpf/tk_emit.bpf.h bpf/tk_filter.bpf.h

vmlinux/x86_64/vmlinux.h:

bpf/opensnoop.h:

bpf/tk_shared.h:

bpf/tk_emit.bpf.h:

bpf/tk_filter.bpf.h:
