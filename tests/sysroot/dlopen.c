// requires: dlopen
// link: dynamic
// shared: dlopen_lib.c
/* dlopen: call into a shared library linked at build time (data, TLS, constructor), then
 * find the same symbols at run time with dlsym and dlopen. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

extern int lib_counter;
extern __thread int lib_tls;
int lib_constructed(void);
int lib_add(int a, int b);
int lib_bump_tls(void);

int main(void)
{
	printf("constructor ran: %d\n", lib_constructed());
	printf("lib_add(1, 2) = %d\n", lib_add(1, 2));
	lib_counter = 100;
	printf("after lib_counter = 100: lib_add(1, 2) = %d\n", lib_add(1, 2));
	int before = lib_tls;
	int bumped = lib_bump_tls();
	printf("lib_tls = %d, bumped by the lib: %d, seen here: %d\n", before, bumped, lib_tls);

	int (*add)(int, int) = (int (*)(int, int))dlsym(RTLD_DEFAULT, "lib_add");
	printf("dlsym(RTLD_DEFAULT, lib_add): %s\n", !add ? dlerror() : add == lib_add ? "same function" : "DIFFERENT");
	int *counter = (int *)dlsym(RTLD_DEFAULT, "lib_counter");
	printf("dlsym(RTLD_DEFAULT, lib_counter): %s\n", counter == &lib_counter ? "same object" : "DIFFERENT");

	/* already loaded: dlopen by name must return it (the rpath also points at it) */
	void *h = dlopen("libdlopen_lib.so", RTLD_NOW);
	if (!h) {
		printf("dlopen(libdlopen_lib.so) failed: %s\n", dlerror());
		return 1;
	}
	add = (int (*)(int, int))dlsym(h, "lib_add");
	printf("dlsym(handle, lib_add)(5, 6) = %d, %s\n", add ? add(5, 6) : -1,
	       add == lib_add ? "same function" : "DIFFERENT");
	printf("dlsym(handle, missing) = %s\n", dlsym(h, "no_such_symbol") ? "FOUND" : "NULL");
	dlclose(h);

	void *self = dlopen(NULL, RTLD_NOW);
	printf("dlopen(NULL) finds lib_add: %s\n", self && dlsym(self, "lib_add") == (void *)lib_add ? "yes" : "no");
	dlerror();
	void *missing = dlopen("libdoes_not_exist.so", RTLD_NOW);
	printf("dlopen(missing library) = %s, dlerror %s\n", missing ? "HANDLE" : "NULL",
	       dlerror() ? "set" : "NOT SET");
	return 0;
}
