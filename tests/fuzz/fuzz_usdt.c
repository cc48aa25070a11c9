/* libFuzzer harness for the USDT note parser (libtrace/usdt.c).
 *
 * Input: one flag byte (bit 0: ELF64 addresses), then a stapsdt note's
 * description. For any bytes: no read outside them (ASan); on success
 * provider and name are non-empty, and the three strings with their
 * NULs fit in what followed the addresses. Any violation abort()s.
 *
 *   make fuzz  (fuzz_src_usdt in the Makefile)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "usdt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tk_usdt_probe p;
	bool elf64;
	size_t room, used;
	void *desc;
	int err;

	if (size < 1)
		return 0;
	elf64 = data[0] & 1;
	/* A copy of exactly the description: ASan sees any overread. */
	desc = malloc(size - 1 ? size - 1 : 1);
	if (!desc)
		return 0;
	memcpy(desc, data + 1, size - 1);
	err = tk_usdt_note_parse(desc, size - 1, elf64, &p);
	if (err == 0) {
		room = size - 1 - 3 * (elf64 ? 8 : 4);
		used = strlen(p.provider) + strlen(p.name) + strlen(p.args) + 3;
		if (!*p.provider || !*p.name || used > room)
			abort();
		free(p.strings);
	} else if (err != -EINVAL && err != -ENOMEM) {
		abort();
	}
	free(desc);
	return 0;
}
