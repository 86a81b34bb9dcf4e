// link: dynamic
/* link_dynamic: the default link must use musl's dynamic loader /lib/ld-musl-<arch>.so.1. */
#include "link_mode.h"

int main(void)
{
	report_link_mode();
	return 0;
}
