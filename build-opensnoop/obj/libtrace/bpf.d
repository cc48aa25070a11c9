build-opensnoop/obj/libtrace/bpf.o: libtrace/bpf.c libtrace/bpf.h \
 libtrace/events.h libtrace/opts.h bpf/tk_shared.h libtrace/setup.h
libtrace/bpf.h:
libtrace/events.h:
libtrace/opts.h:
bpf/tk_shared.h:
libtrace/setup.h:
