build-opensnoop/obj/libtrace/names.o: libtrace/names.c libtrace/names.h
libtrace/names.h:
