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
	std::string a = std::format("[{:>8}] [{:<6}] [{:^7}] [{:08.3f}] [{:#x}] [{:+}]", "ab", 42, "mid",
	                            3.14159, 255, 7);
	std::string b = std::format("{1} {0} {{braces}} {2:.2e}", "first", "second", 1234.5);
	if (a == "[      ab] [42    ] [  mid  ] [0003.142] [0xff] [+7]" &&
	    b == "second first {braces} 1.23e+03")
		std::printf("std::format formats\n");
	else
		std::printf("std::format gave: %s / %s\n", a.c_str(), b.c_str());
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
