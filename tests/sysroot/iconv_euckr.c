// requires: posix
/* iconv_euckr: EUC-KR (CP949) to UTF-8 with iconv(). Regression test for CVE-2025-26519:
 * lead bytes 0xc7..0xfd with a non-KS X 1001 trail byte must be rejected with EILSEQ
 * instead of producing an out-of-range character (and writing out of bounds). */
#include <errno.h>
#include <iconv.h>
#include <stdio.h>
#include <string.h>

static void hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%s%02x", i ? " " : "", (unsigned char)p[i]);
}

/* Convert `len` bytes of `in`; print the input, then the result. */
static int convert(const char *in, size_t len)
{
	iconv_t cd = iconv_open("UTF-8", "EUC-KR");
	if (cd == (iconv_t)-1) {
		printf("iconv_open(UTF-8, EUC-KR) failed: %s\n", strerror(errno));
		return 1;
	}
	/* guard bytes around the output catch writes outside it */
	struct { char before[16], out[32], after[16]; } buf;
	memset(&buf, 0x55, sizeof buf);
	char *inp = (char *)in, *outp = buf.out;
	size_t inleft = len, outleft = sizeof buf.out;
	errno = 0;
	size_t r = iconv(cd, &inp, &inleft, &outp, &outleft);
	int saved = errno;
	hex(in, len);
	if (outleft > sizeof buf.out || outp != buf.out + (sizeof buf.out - outleft)) {
		/* the unfixed decoder made the output pointer go backwards */
		printf(": BROKEN: output pointer moved outside the buffer\n");
		return 1;
	}
	size_t produced = sizeof buf.out - outleft;
	if (r == (size_t)-1 && saved == EILSEQ) {
		printf(": EILSEQ");
		if (produced) {
			printf(" after ");
			hex(buf.out, produced);
		}
		printf(" (%zu bytes left)", inleft);
	} else if (r == (size_t)-1) {
		printf(": error %s", strerror(saved));
	} else {
		printf(": accepted ");
		hex(buf.out, produced);
	}
	for (size_t i = 0; i < sizeof buf.before; i++)
		if (buf.before[i] != 0x55 || buf.after[i] != 0x55) {
			printf(" OUT-OF-BOUNDS WRITE");
			break;
		}
	printf("\n");
	iconv_close(cd);
	return 0;
}

int main(void)
{
	static const struct { const char *bytes; size_t len; } cases[] = {
		{"\xb0\xa1", 2},                        /* U+AC00 */
		{"\xc7\xd1\xb1\xb9\xbe\xee", 6},        /* U+D55C U+AD6D U+C5B4 */
		{"EUC-KR \xb0\xa1!", 10},               /* ASCII passes through */
		{"\xc6\x41", 2},                        /* CP949 extension, U+D78D */
		{"\xc6\x52", 2},                        /* last CP949 extension character, U+D7A3 */
		{"\xc6\x53", 2},                        /* past the end of the extension: invalid */
		{"\xc7\x41", 2},                        /* CVE-2025-26519: invalid */
		{"\xdd\x52", 2},                        /* CVE-2025-26519: invalid */
		{"\xb0\xa1\xc7\x41", 4},                /* valid character, then an invalid pair */
		{"\xb0", 1},                            /* truncated: EINVAL */
	};
	/* a C library without the charset (picolibc) says so, in its own expected file */
	iconv_t probe = iconv_open("UTF-8", "EUC-KR");
	if (probe == (iconv_t)-1 && errno == EINVAL) {
		printf("EUC-KR: not a charset of this C library (iconv_open: EINVAL)\n");
		return 0;
	}
	if (probe != (iconv_t)-1)
		iconv_close(probe);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (convert(cases[i].bytes, cases[i].len))
			return 1;
	return 0;
}
