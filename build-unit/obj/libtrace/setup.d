build-unit/obj/libtrace/setup.o: libtrace/setup.c libtrace/setup.h \
 libtrace/opts.h bpf/tk_shared.h
libtrace/setup.h:
libtrace/opts.h:
bpf/tk_shared.h:
