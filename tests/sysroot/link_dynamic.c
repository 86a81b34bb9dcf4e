// requires: elf
// link: dynamic
/* link_dynamic: the default link must use the C library's dynamic loader (/lib/ld-musl-<arch>.so.1,
 * /lib/ld-linux-<arch>.so.<n>). */
#include "link_mode.h"

int main(void)
{
	report_link_mode();
	return 0;
}
