/* The DLL dll_load.c loads at run time: data, a function, thread-local data and its DllMain */
#include <windows.h>

int lib_counter = 1;
static int attached;
static __thread int tls = 10;

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, void *reserved)
{
	(void)instance;
	(void)reserved;
	if (reason == DLL_PROCESS_ATTACH)
		attached++;
	return TRUE;
}

int lib_attached(void)
{
	return attached;
}

int lib_add(int a, int b)
{
	return a + b + lib_counter - 1;
}

int lib_bump_tls(void)
{
	return ++tls;
}
