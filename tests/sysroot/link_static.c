// requires: elf
// link: static
/* link_static: -static must give a program without PT_INTERP that loads no other object. */
#include "link_mode.h"

int main(void)
{
	report_link_mode();
	return 0;
}
