/* Loader of the floor of an overhead comparison (empty programs):
 *   floor_loader OBJ PROG [PROG...]
 * loads and attaches each PROG of OBJ (the others are not loaded), prints
 * "ready", and holds them until SIGINT or SIGTERM. */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdbool.h>
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
	struct bpf_link *links[16] = { NULL };
	int i, n = argc - 2;

	if (argc < 3 || n > 16) {
		fprintf(stderr, "usage: %s OBJ PROG [PROG...] (16 at most)\n", argv[0]);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		perror(argv[1]);
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		bool wanted = false;

		for (i = 0; i < n; i++)
			wanted |= !strcmp(bpf_program__name(prog), argv[2 + i]);
		bpf_program__set_autoload(prog, wanted);
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "%s: cannot load %s\n", argv[0], argv[1]);
		return 1;
	}
	for (i = 0; i < n; i++) {
		prog = bpf_object__find_program_by_name(obj, argv[2 + i]);
		links[i] = prog ? bpf_program__attach(prog) : NULL;
		if (!links[i]) {
			fprintf(stderr, "%s: cannot attach %s\n", argv[0], argv[2 + i]);
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	pause();
	for (i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(obj);
	return 0;
}
