// flags: -fsanitize=undefined -fsanitize-recover=all
// requires: clang_rt.ubsan_standalone
/* ubsan_standalone: -fsanitize=undefined with its full runtime, no other flag */
#define OVERFLOW_MESSAGE \
	"runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'"
#define MISALIGNED_MESSAGE "runtime error: load of misaligned address"
#include "ubsan_report.h"

/* A misaligned load the machine refuses (SIGBUS) ends the child that makes it: the runtime's
 * own SIGBUS report would walk the stack, which never ends under 32-bit qemu-user (see
 * fuzzer.c), and says nothing this program checks */
const char *__ubsan_default_options(void)
{
	return "handle_sigbus=0";
}
