// flags: -fsanitize=undefined -fsanitize-recover=all
// requires: clang_rt.ubsan_standalone
/* ubsan_standalone: -fsanitize=undefined with its full runtime, no other flag */
#define OVERFLOW_MESSAGE \
	"runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'"
#define MISALIGNED_MESSAGE "runtime error: load of misaligned address"
#include "ubsan_report.h"
