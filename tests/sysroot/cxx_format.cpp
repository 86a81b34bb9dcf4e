// flags: -std=c++20
/* cxx_format: std::format where the C++ library has it, and the test knows which library
 * lacks it: libc++ has had it since 17, libstdc++ only since 13 (GCC 12's has no <format>).
 * Anything else is a failure: a library that should have it and does not, or the reverse. */
#include <cstdio>
#include <string>
#include <version>
#if defined(__cpp_lib_format)
#include <format>
#endif

int main()
{
#if defined(_LIBCPP_VERSION)
	const bool expected = _LIBCPP_VERSION >= 170000;
	const char *lib = "libc++";
#elif defined(_GLIBCXX_RELEASE)
	const bool expected = _GLIBCXX_RELEASE >= 13;
	const char *lib = "libstdc++";
#else
	const bool expected = false;
	const char *lib = "an unknown C++ library";
#endif
#if defined(__cpp_lib_format)
	std::string s = std::format("{:>6}|{:<6}|{:^7.3f}|{:#x}", "right", "left", 3.14159, 255);
	std::printf("%s\n", s == " right|left  | 3.142 |0xff" ? "std::format formats"
	                                                      : s.c_str());
	const bool has = true;
#else
	std::printf("std::format formats\n");   /* what a library with it prints: one expected file */
	const bool has = false;
#endif
	if (has != expected) {
		std::printf("%s %s std::format, which this test did not expect\n", lib,
		            has ? "has" : "lacks");
		return 1;
	}
	return 0;
}
