build-opensnoop/obj/tools/opensnoop.o: tools/opensnoop.c bpf/opensnoop.h \
 bpf/tk_shared.h build-opensnoop/obj/opensnoop.skel.h libtrace/tracekit.h \
 libtrace/bpf.h libtrace/events.h libtrace/hist.h libtrace/json.h \
 libtrace/names.h libtrace/opts.h bpf/tk_shared.h libtrace/output.h \
 libtrace/setup.h
bpf/opensnoop.h:
bpf/tk_shared.h:
build-opensnoop/obj/opensnoop.skel.h:
libtrace/tracekit.h:
libtrace/bpf.h:
libtrace/events.h:
libtrace/hist.h:
libtrace/json.h:
libtrace/names.h:
libtrace/opts.h:
bpf/tk_shared.h:
libtrace/output.h:
libtrace/setup.h:
