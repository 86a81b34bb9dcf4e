// requires: exceptions
// link: dynamic
// shared: cxx_exceptions_shared_lib.cpp
/* cxx_exceptions_shared: exceptions crossing a shared library boundary in both directions,
 * caught by a type whose typeinfo lives in the library. */
#include <cstdio>
#include <stdexcept>
#include <string>

/* the same declaration is in cxx_exceptions_shared_lib.cpp, which defines the members */
struct lib_error : std::runtime_error {
	int code;
	lib_error(const std::string &what, int code);
	~lib_error() override;
};

void lib_throw(int code);
int lib_call(int (*callback)(int), int x);
int lib_call_translating(int (*callback)(int), int x);

struct app_error : std::logic_error {
	int value;
	app_error(const std::string &what, int v) : std::logic_error(what), value(v) {}
};

static int callback(int x)
{
	if (x < 0)
		throw app_error("negative input", x);
	return x * 2;
}

int main()
{
	std::printf("1. library throws, program catches by type:\n");
	try {
		lib_throw(17);
	} catch (const lib_error &e) {
		std::printf("caught lib_error '%s' code %d\n", e.what(), e.code);
	}
	try {
		lib_throw(18);
	} catch (const std::runtime_error &e) {
		std::printf("caught as runtime_error '%s', is lib_error: %s\n", e.what(),
		            dynamic_cast<const lib_error *>(&e) ? "yes" : "no");
	}

	std::printf("2. program callback throws through the library:\n");
	std::printf("lib_call(callback, 21) = %d\n", lib_call(callback, 21));
	try {
		lib_call(callback, -5);
		std::printf("WRONG: no exception\n");
	} catch (const app_error &e) {
		std::printf("caught app_error '%s' value %d\n", e.what(), e.value);
	}

	std::printf("3. library catches the program's exception and throws its own:\n");
	try {
		lib_call_translating(callback, -3);
	} catch (const lib_error &e) {
		std::printf("caught lib_error '%s' code %d\n", e.what(), e.code);
	}

	std::printf("4. program throws lib_error itself, constructed through the library:\n");
	try {
		throw lib_error("thrown in the program", 5);
	} catch (const lib_error &e) {
		std::printf("caught lib_error '%s' code %d\n", e.what(), e.code);
	}
	return 0;
}
