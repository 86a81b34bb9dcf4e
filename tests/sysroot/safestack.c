// flags: -fsanitize=safe-stack -pthread
// requires: clang_rt.safestack
// link: dynamic
/* safestack: -fsanitize=safe-stack moves a buffer whose address escapes to the unsafe stack
 * (the runtime's, one per thread), away from the return addresses on the regular stack; in
 * the main thread and in a new one. Dynamic only: in a static program the runtime's
 * pthread_create interceptor finds no real pthread_create (it looks it up with dlsym) and
 * calls address 0. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

static const char *where(void)
{
	char buf[64];   /* its address escapes to snprintf: it goes to the unsafe stack */
	snprintf(buf, sizeof buf, "%s", "x");
	uintptr_t b = (uintptr_t)buf;
	uintptr_t lo = (uintptr_t)__builtin___get_unsafe_stack_bottom();
	uintptr_t hi = (uintptr_t)__builtin___get_unsafe_stack_top();
	uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
	if (!(lo <= b && b < hi))
		return "no (the buffer is not on the unsafe stack)";
	if (lo <= frame && frame < hi)
		return "no (the return addresses are on the unsafe stack)";
	return "yes";
}

static void *thread(void *arg)
{
	*(const char **)arg = where();
	return NULL;
}

int main(void)
{
	printf("main thread: buffer on the unsafe stack: %s\n", where());
	const char *in_thread = "not run";
	pthread_t t;
	pthread_create(&t, NULL, thread, &in_thread);
	pthread_join(t, NULL);
	printf("new thread: buffer on its own unsafe stack: %s\n", in_thread);
	return 0;
}
