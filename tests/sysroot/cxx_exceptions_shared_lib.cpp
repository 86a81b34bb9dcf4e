/* cxx_exceptions_shared_lib: shared library used by cxx_exceptions_shared.cpp. It owns the
 * typeinfo of lib_error (its key function, the destructor, is defined here). */
#include <cstdio>
#include <stdexcept>
#include <string>

/* the same declaration is in cxx_exceptions_shared.cpp */
struct lib_error : std::runtime_error {
	int code;
	lib_error(const std::string &what, int code);
	~lib_error() override;
};

lib_error::lib_error(const std::string &what, int code) : std::runtime_error(what), code(code) {}
lib_error::~lib_error() {}

struct lib_guard {
	const char *name;
	~lib_guard() { std::printf("  lib: %s destroyed\n", name); }
};

void lib_throw(int code)
{
	lib_guard g{"lib_throw frame"};
	throw lib_error("thrown in the library", code);
}

/* calls back into the program; whatever the callback throws passes through this frame */
int lib_call(int (*callback)(int), int x)
{
	lib_guard g{"lib_call frame"};
	return callback(x) + 1;
}

/* catches anything derived from std::exception and translates it into a lib_error */
int lib_call_translating(int (*callback)(int), int x)
{
	try {
		return callback(x);
	} catch (const std::exception &e) {
		throw lib_error(std::string("translated: ") + e.what(), 99);
	}
}
