build-opensnoop/obj/libtrace/hist.o: libtrace/hist.c libtrace/hist.h \
 libtrace/json.h
libtrace/hist.h:
libtrace/json.h:
