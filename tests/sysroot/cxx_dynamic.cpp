// requires: exceptions
// link: dynamic
/* cxx_dynamic: the common C++ program (cxx_link_common.h) linked dynamically. */
#include "cxx_link_common.h"

int main()
{
	return run_program();
}
