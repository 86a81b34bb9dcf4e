/* strict_fp_calls' library: a function under C's own way to ask for strict floating point, the
 * FENV_ACCESS pragma, which calls libc (through the library's PLT) when the program calls it. */
#include <string.h>

size_t lib_length(const char *s)
{
#pragma STDC FENV_ACCESS ON
	return strlen(s);
}
