build-opensnoop/obj/libtrace/events.o: libtrace/events.c \
 libtrace/events.h libtrace/bpf.h libtrace/json.h libtrace/opts.h \
 bpf/tk_shared.h libtrace/setup.h
libtrace/events.h:
libtrace/bpf.h:
libtrace/json.h:
libtrace/opts.h:
bpf/tk_shared.h:
libtrace/setup.h:
