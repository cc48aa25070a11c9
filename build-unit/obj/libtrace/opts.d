build-unit/obj/libtrace/opts.o: libtrace/opts.c libtrace/opts.h \
 bpf/tk_shared.h libtrace/setup.h
libtrace/opts.h:
bpf/tk_shared.h:
libtrace/setup.h:
