// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User and group names in a static program: /etc/passwd and /etc/group.
 *
 * A static glibc reads those files itself, but every other service that
 * /etc/nsswitch.conf names ("passwd: files systemd", sss, ldap) is a
 * shared module it would dlopen into a process that has no shared libc:
 * a name the files lack then crashes the program (Debian's default
 * nsswitch.conf does this for any unknown user). `make static` links this
 * constructor into every program: it tells glibc, through its own
 * interface for it (nss.h), to look users and groups up in the files
 * only, so an unknown name is the usage error it is in the dynamic build.
 */
#include <nss.h>

__attribute__((constructor)) static void users_from_files_only(void)
{
	__nss_configure_lookup("passwd", "files");
	__nss_configure_lookup("group", "files");
	__nss_configure_lookup("initgroups", "files");
}
