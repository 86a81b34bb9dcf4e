// system: Linux
// link: dynamic
// flags: -lm
/* host_isolation: every shared object a dynamic program maps comes from its sysroot, never
 * from the host. qemu-user shows the guest the host paths it opened, so /proc/self/maps
 * names each file where it was really found; the runner passes the sysroot's path in
 * CROSSROOT_SYSROOT. A library missing from the sysroot would be taken from the host's path
 * of the same name (qemu -L falls back to it), and a wrong loader or an ld.so.cache read from
 * the host would show up here too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	const char *sysroot = getenv("CROSSROOT_SYSROOT");
	if (!sysroot || !*sysroot) {
		printf("CROSSROOT_SYSROOT is not set\n");
		return 1;
	}
	FILE *maps = fopen("/proc/self/maps", "r");
	if (!maps) {
		printf("cannot read /proc/self/maps\n");
		return 1;
	}
	char line[4096];
	int inside = 0, outside = 0;
	char last[4096] = "";
	while (fgets(line, sizeof(line), maps)) {
		char *path = strchr(line, '/');
		if (!path || !strstr(path, ".so"))
			continue;
		path[strcspn(path, "\n")] = '\0';
		if (strcmp(path, last) == 0)
			continue;
		snprintf(last, sizeof(last), "%s", path);
		if (strncmp(path, sysroot, strlen(sysroot)) == 0 && path[strlen(sysroot)] == '/') {
			inside++;
		} else {
			outside++;
			printf("from outside the sysroot: %s\n", path);
		}
	}
	fclose(maps);
	/* libm: a library of its own beside glibc's libc.so.6 and loader (musl's libc.so has it) */
	volatile double x = 2.0;
	printf("shared objects from the sysroot: %s, from elsewhere: %d (sqrt(2) = %.6f)\n",
	       inside ? "some" : "none", outside, sqrt(x));
	return outside != 0 || inside == 0;
}
