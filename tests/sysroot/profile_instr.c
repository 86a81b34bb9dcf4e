// flags: -fprofile-instr-generate -fcoverage-mapping
// requires: clang_rt.profile
/* profile_instr: -fprofile-instr-generate with no other flag: the profile runtime counts and
 * writes a raw profile (named with __llvm_profile_set_filename) that starts with its magic. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void __llvm_profile_set_filename(const char *name);
int __llvm_profile_write_file(void);

static int work(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += i & 1 ? i : -i;
	return s;
}

int main(void)
{
	char name[64];
	/* in the directory it runs in (the test's scratch): the runtime writes it again at exit */
	snprintf(name, sizeof(name), "profile_instr-%ld.profraw", (long)getpid());
	__llvm_profile_set_filename(name);
	printf("work: %d\n", work(1000));
	if (__llvm_profile_write_file() != 0) {
		printf("no profile written\n");
		return 1;
	}
	FILE *f = fopen(name, "rb");
	uint64_t magic = 0;
	size_t got = f ? fread(&magic, sizeof(magic), 1, f) : 0;
	if (f)
		fclose(f);
	/* INSTR_PROF_RAW_MAGIC_64 (or _32 on 32-bit targets), in the target's byte order */
	printf("raw profile magic: %s\n", got == 1 && (magic == 0xff6c70726f667281ULL ||
	       magic == 0xff6c70726f665281ULL) ? "yes" : "no");
	return 0;
}
