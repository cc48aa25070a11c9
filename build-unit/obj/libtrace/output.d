build-unit/obj/libtrace/output.o: libtrace/output.c libtrace/output.h \
 libtrace/json.h
libtrace/output.h:
libtrace/json.h:
