// requires: files posix
// flags: -std=c++20
/* byte_order: the C and C++ libraries agree with the machine on byte order, on little- and
 * big-endian targets alike (the output is the same on both): the compiler's macro, <endian.h>,
 * std::endian and the bytes in memory name one order; htonl and htobe64 put the most
 * significant byte first; a 64-bit value passes through printf's varargs, a binary file
 * (stdio and iostreams) and a double's bits whole. */
#include <arpa/inet.h>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <endian.h>
#include <fcntl.h>
#include <fstream>
#include <inttypes.h>
#include <sstream>
#include <unistd.h>

static int failures;

/* mkstemp, which WASI's C library leaves out (no temporary directories): there, the X's
 * become random letters and the file is created exclusively, as mkstemp does */
static int make_temporary(char *path)
{
#ifdef __wasi__
	char *x = path + std::strlen(path) - 6;
	for (int tries = 0; tries < 100; tries++) {
		unsigned char random[6];
		if (getentropy(random, sizeof random) != 0)
			return -1;
		for (int i = 0; i < 6; i++)
			x[i] = "abcdefghijklmnopqrstuvwxyz"[random[i] % 26];
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
#else
	return mkstemp(path);
#endif
}

static void expect(bool ok, const char *what)
{
	std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	failures += !ok;
}

static bool bytes_are(const void *p, const unsigned char *want, size_t n)
{
	return std::memcmp(p, want, n) == 0;
}

int main()
{
	static const unsigned char be4[] = {1, 2, 3, 4}, le4[] = {4, 3, 2, 1};
	static const unsigned char be8[] = {1, 2, 3, 4, 5, 6, 7, 8};
	const uint32_t v32 = 0x01020304;
	const uint64_t v64 = 0x0102030405060708ULL;
	const bool big = bytes_are(&v32, be4, 4);
	expect(big || bytes_are(&v32, le4, 4), "memory holds one byte order");
	expect(big == (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__), "__BYTE_ORDER__ matches memory");
	expect(big == (BYTE_ORDER == BIG_ENDIAN), "<endian.h> BYTE_ORDER matches memory");
	expect(big == (std::endian::native == std::endian::big), "std::endian::native matches memory");

	uint32_t n32 = htonl(v32);
	uint16_t n16 = htons(0x0102);
	uint64_t b64 = htobe64(v64), l64 = htole64(v64);
	expect(bytes_are(&n32, be4, 4) && ntohl(n32) == v32, "htonl/ntohl: network order is big-endian");
	expect(bytes_are(&n16, be4, 2) && ntohs(n16) == 0x0102, "htons/ntohs");
	expect(bytes_are(&b64, be8, 8) && be64toh(b64) == v64, "htobe64/be64toh");
	expect(le64toh(l64) == v64 && ((const unsigned char *)&l64)[0] == 8, "htole64/le64toh");

	/* a double's bits: the words of a double follow the integer order */
	double one = 1.0;
	uint64_t bits;
	std::memcpy(&bits, &one, 8);
	expect(bits == 0x3ff0000000000000ULL, "double 1.0 is 0x3ff0000000000000");

	/* 64-bit values through varargs (register pairs on 32-bit big-endian targets) */
	char text[64];
	std::snprintf(text, sizeof(text), "%016" PRIx64 " %d %016llx", v64, 7, 0x1122334455667788ULL);
	expect(std::strcmp(text, "0102030405060708 7 1122334455667788") == 0, "printf of 64-bit values");
	uint64_t back = 0;
	int seven = 0;
	expect(std::sscanf("0102030405060708 7", "%" SCNx64 " %d", &back, &seven) == 2 &&
	       back == v64 && seven == 7, "scanf of 64-bit values");

	/* a binary file: written with stdio, read back byte by byte and whole */
	char path[] = "/tmp/byte_order.XXXXXX";
	int fd = make_temporary(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w+b") : nullptr;
	expect(f != nullptr, "temporary file");
	if (!f)
		return 1;
	std::fwrite(&v64, 8, 1, f);
	std::rewind(f);
	unsigned char raw[8];
	for (int i = 0; i < 8; i++)
		raw[i] = (unsigned char)std::fgetc(f);
	uint64_t whole = 0;
	std::rewind(f);
	expect(std::fread(&whole, 8, 1, f) == 1 && whole == v64 && std::memcmp(raw, &v64, 8) == 0,
	       "stdio writes memory's bytes and reads them back");
	std::fclose(f);

	/* the same through iostreams */
	{
		std::ofstream out(path, std::ios::binary | std::ios::trunc);
		out.write(reinterpret_cast<const char *>(&v32), 4);
	}
	std::ifstream in(path, std::ios::binary);
	char got[4] = {};
	in.read(got, 4);
	uint32_t r32;
	std::memcpy(&r32, got, 4);
	expect(in.gcount() == 4 && r32 == v32 && bytes_are(got, big ? be4 : le4, 4),
	       "iostreams write memory's bytes and read them back");
	unlink(path);

	std::ostringstream hex;
	hex << std::hex << v64;
	expect(hex.str() == "102030405060708", "iostream formats a 64-bit value");
	return failures != 0;
}
