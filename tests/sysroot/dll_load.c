// system: Windows
// link: dynamic
// shared: dll_load_lib.c
/* dll_load: a DLL the program does not import, loaded at run time (LoadLibrary runs its
 * DllMain), its functions and data found by name (GetProcAddress), its thread-local data per
 * thread (TLS in a DLL loaded at run time), unloaded by the last FreeLibrary; a missing DLL
 * or symbol fails as Windows says. */
#include <windows.h>
#include <stdio.h>

typedef int (*int_fn)(void);

static DWORD WINAPI in_thread(void *bump)
{
	int first = ((int_fn)bump)();
	int second = ((int_fn)bump)();
	printf("another thread: lib_bump_tls() = %d, then %d\n", first, second);
	return 0;
}

int main(void)
{
	const char *name = "libdll_load_lib.dll";
	printf("loaded before LoadLibrary: %s\n", GetModuleHandleA(name) ? "yes" : "no");
	HMODULE h = LoadLibraryA(name);
	if (!h) {
		printf("LoadLibrary(%s) failed: error %lu\n", name, (unsigned long)GetLastError());
		return 1;
	}
	int_fn attached = (int_fn)(void (*)(void))GetProcAddress(h, "lib_attached");
	int (*add)(int, int) = (int (*)(int, int))(void (*)(void))GetProcAddress(h, "lib_add");
	int_fn bump = (int_fn)(void (*)(void))GetProcAddress(h, "lib_bump_tls");
	int *counter = (int *)(void *)GetProcAddress(h, "lib_counter");
	if (!attached || !add || !bump || !counter) {
		printf("GetProcAddress failed: lib_attached %p, lib_add %p, lib_bump_tls %p, lib_counter %p\n",
		       (void *)attached, (void *)add, (void *)bump, (void *)counter);
		return 1;
	}
	printf("DllMain(DLL_PROCESS_ATTACH) ran: %d\n", attached());
	printf("lib_add(1, 2) = %d\n", add(1, 2));
	*counter = 100;
	printf("after lib_counter = 100: lib_add(1, 2) = %d\n", add(1, 2));
	int first = bump();
	printf("main thread: lib_bump_tls() = %d, then %d\n", first, bump());
	HANDLE thread = CreateThread(NULL, 0, in_thread, (void *)bump, 0, NULL);
	if (!thread || WaitForSingleObject(thread, INFINITE) != WAIT_OBJECT_0) {
		printf("CreateThread failed: error %lu\n", (unsigned long)GetLastError());
		return 1;
	}
	CloseHandle(thread);
	printf("main thread again: lib_bump_tls() = %d\n", bump());
	printf("GetProcAddress(no_such_symbol) = %s\n",
	       GetProcAddress(h, "no_such_symbol") ? "FOUND" : "NULL");
	printf("LoadLibrary again: %s\n", LoadLibraryA(name) == h ? "same module" : "DIFFERENT");
	FreeLibrary(h);
	printf("loaded after one FreeLibrary: %s\n", GetModuleHandleA(name) ? "yes" : "no");
	FreeLibrary(h);
	printf("loaded after the second: %s\n", GetModuleHandleA(name) ? "yes" : "no");
	HMODULE missing = LoadLibraryA("libdoes_not_exist.dll");
	DWORD why = GetLastError();
	printf("LoadLibrary(libdoes_not_exist.dll) = %s, %s\n", missing ? "HANDLE" : "NULL",
	       why == ERROR_MOD_NOT_FOUND ? "ERROR_MOD_NOT_FOUND" : "another error");
	return 0;
}
