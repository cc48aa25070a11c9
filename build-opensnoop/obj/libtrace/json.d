build-opensnoop/obj/libtrace/json.o: libtrace/json.c libtrace/json.h
libtrace/json.h:
