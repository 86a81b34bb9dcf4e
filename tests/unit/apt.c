/* Unit tests of apt: the archives of the host's apt configuration.
 * See unit.h for TEST and CHECK. */
#define _GNU_SOURCE
#include "unit.h"

#include "apt.h"

/* The archives of the host's apt configuration: one-line entries with options, deb822 stanzas
 * with several URIs, no deb-src, nothing disabled, no duplicates, no unusable scheme. */
TEST(apt_archive_bases)
{
	char *etc = xasprintf("%s/apt-etc", scratch);
	char *parts = xasprintf("%s/sources.list.d", etc);
	CHECK(mkdir_p(parts, 0755) == 0);
	char *list = xasprintf("%s/sources.list", etc);
	const char *one_line = "# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://a.example/debian/ "
	                       "bookworm main\ndeb-src http://src.example/debian bookworm main\n"
	                       "  deb\thttps://b.example/debian bookworm main # trailing\n"
	                       "deb cdrom:[Debian]/ bookworm main\n";
	CHECK(write_file_atomic(list, one_line, strlen(one_line), 0644) == 0);
	char *d822 = xasprintf("%s/x.sources", parts);
	const char *stanzas = "Types: deb deb-src\nURIs: http://a.example/debian file:///srv/mirror/\n"
	                      "Suites: bookworm\n\nTypes: deb\nURIs: http://off.example/debian\n"
	                      "Enabled: no\n\nTypes: deb-src\nURIs: http://src2.example/\n";
	CHECK(write_file_atomic(d822, stanzas, strlen(stanzas), 0644) == 0);
	setenv("CROSSROOT_APT_SOURCES", etc, 1);
	struct strlist bases = {0};
	CHECK(apt_archive_bases(&bases) == 3);
	CHECK(bases.n == 3 && strcmp(bases.v[0], "http://a.example/debian") == 0 &&
	      strcmp(bases.v[1], "https://b.example/debian") == 0 &&
	      strcmp(bases.v[2], "file:///srv/mirror") == 0);
	unsetenv("CROSSROOT_APT_SOURCES");
	strlist_release(&bases);
	free(d822);
	free(list);
	free(parts);
	free(etc);
}
