/* Loader of one empty program of syscount_overhead_floor.bpf.o:
 *   syscount_overhead_floor OBJ PROG
 * attaches PROG, prints "ready", and holds it until SIGINT or SIGTERM. */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_signal(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_link *link = NULL;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OBJ PROG\n", argv[0]);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		perror(argv[1]);
		return 1;
	}
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, !strcmp(bpf_program__name(prog), argv[2]));
	prog = bpf_object__find_program_by_name(obj, argv[2]);
	if (prog && !bpf_object__load(obj))
		link = bpf_program__attach(prog);
	if (!link) {
		fprintf(stderr, "%s: cannot load or attach %s\n", argv[0], argv[2]);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	pause();
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return 0;
}
