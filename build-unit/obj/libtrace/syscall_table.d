build-unit/obj/libtrace/syscall_table.o: \
 build-unit/obj/libtrace/syscall_table.c libtrace/names.h
libtrace/names.h:
