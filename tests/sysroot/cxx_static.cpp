// requires: exceptions
// link: static
/* cxx_static: the common C++ program (cxx_link_common.h) linked with -static. */
#include "cxx_link_common.h"

int main()
{
	return run_program();
}
