// requires: posix
/* stdio_locale: printf/snprintf/sscanf/strtod formatting, a UTF-8 locale with multibyte
 * conversions, qsort and strftime of a fixed time. */
#define _GNU_SOURCE   /* wcwidth and timegm: glibc declares them for X/Open and BSD code */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int main(void)
{
	/* printf formatting */
	printf("[%5d] [%-5d] [%05d] [%+d] [%x] [%#o] [%X]\n", 42, 42, 42, 42, 255, 8, 0xbeefu);
	printf("[%lld] [%llu] [%zu] [%jd]\n", -9223372036854775807LL - 1, 18446744073709551615ULL,
	       (size_t)12345, (intmax_t)-7);
	printf("[%.3f] [%10.2e] [%g] [%g] [%G] [%a]\n", 3.14159, 12345.678, 0.0001, 1e20, 1e-10, 1.0);
	printf("[%s] [%.3s] [%8s] [%-8s] [%c] [%%]\n", "text", "abcdef", "right", "left", 'z');
	char buf[16];
	int n = snprintf(buf, sizeof buf, "%s-%d", "a fairly long string", 123);
	printf("snprintf: \"%s\" would need %d\n", buf, n);

	/* scanning and string to number */
	int i;
	unsigned x;
	double d;
	char word[16];
	int got = sscanf("  -17 ff 2.5e3 word rest", "%d %x %lf %15s", &i, &x, &d, word);
	printf("sscanf: %d fields: %d %u %.1f %s\n", got, i, x, d, word);
	char *end;
	double v = strtod("0x1.8p1xyz", &end);
	printf("strtod hex: %.2f rest=%s\n", v, end);
	printf("strtod: %.17g %.17g\n", strtod("0.1", NULL), strtod("1e-320", NULL));
	errno = 0;
	v = strtod("1e400", NULL);
	printf("strtod overflow: %f ERANGE=%d\n", v, errno == ERANGE);
	long l = strtol("-0x7fffffff", NULL, 16);
	unsigned long long ull = strtoull("18446744073709551615", NULL, 10);
	printf("strtol: %ld strtoull: %llu\n", l, ull);

	/* locale and multibyte: "héllo €𝄞" is 8 characters */
	if (!setlocale(LC_ALL, "C.UTF-8")) {
		printf("setlocale C.UTF-8 failed\n");
		return 1;
	}
	printf("MB_CUR_MAX=%d\n", (int)MB_CUR_MAX);
	const char *utf8 = "h\xc3\xa9llo \xe2\x82\xac\xf0\x9d\x84\x9e";
	wchar_t wide[16];
	size_t wn = mbstowcs(wide, utf8, 16);
	printf("mbstowcs: %zu chars:", wn);
	for (size_t k = 0; k < wn; k++)
		printf(" U+%04X", (unsigned)wide[k]);
	printf("\n");
	mbstate_t st;
	memset(&st, 0, sizeof st);
	char mb[MB_LEN_MAX];
	size_t mn = wcrtomb(mb, 0x1D11E, &st);
	printf("wcrtomb(U+1D11E): %zu bytes:", mn);
	for (size_t k = 0; k < mn; k++)
		printf(" %02x", (unsigned char)mb[k]);
	printf("\n");
	printf("mbrtowc invalid: %d\n", mbrtowc(wide, "\xff", 1, &st) == (size_t)-1);
	printf("%%ls: %ls\n", L"\x263A ok");
	printf("wcslen: %zu wcwidth(U+4E00)=%d\n", wcslen(L"abc\x20ac"), wcwidth(0x4E00));

	/* qsort */
	int nums[] = {42, -7, 1000, 0, 3, 3, -2147483647 - 1, 99};
	qsort(nums, sizeof nums / sizeof nums[0], sizeof nums[0], cmp_int);
	printf("qsort ints:");
	for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
		printf(" %d", nums[k]);
	printf("\n");
	const char *words[] = {"pear", "apple", "Zebra", "banana", "apple2"};
	qsort(words, 5, sizeof words[0], cmp_str);
	printf("qsort strings: %s %s %s %s %s\n", words[0], words[1], words[2], words[3], words[4]);

	/* strftime with a fixed time: 2024-02-29 13:05:09 UTC is a Thursday */
	time_t t = 1709211909;
	struct tm tm;
	if (!gmtime_r(&t, &tm)) {
		printf("gmtime_r failed\n");
		return 1;
	}
	char tbuf[128];
	strftime(tbuf, sizeof tbuf, "%Y-%m-%d %H:%M:%S %a %A %b %B %j %u %w %%", &tm);
	printf("strftime: %s\n", tbuf);
	strftime(tbuf, sizeof tbuf, "%F %T %D %e %y", &tm);
	printf("strftime: %s\n", tbuf);
	printf("timegm round trip: %lld\n", (long long)timegm(&tm));
	return 0;
}
