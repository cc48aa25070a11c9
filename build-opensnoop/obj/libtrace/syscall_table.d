build-opensnoop/obj/libtrace/syscall_table.o: \
 build-opensnoop/obj/libtrace/syscall_table.c libtrace/names.h
libtrace/names.h:
