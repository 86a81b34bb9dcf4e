// requires: exceptions threads
// flags: -pthread
/* cxx_exceptions: throw through several frames with destructors running in order, a class
 * hierarchy caught by base, rethrow, nested exceptions, std::exception_ptr across threads. */
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

struct app_error : std::runtime_error {
	explicit app_error(const std::string &what) : std::runtime_error(what) {}
};
struct parse_error : app_error {
	int line;
	parse_error(const std::string &what, int line) : app_error(what), line(line) {}
};
struct io_error : app_error {
	using app_error::app_error;
};

struct tracer {
	int depth;
	explicit tracer(int d) : depth(d) { std::printf("  enter %d\n", depth); }
	~tracer() { std::printf("  leave %d (uncaught_exceptions=%d)\n", depth, std::uncaught_exceptions()); }
};

static int recurse(int depth)
{
	tracer t(depth);
	if (depth == 5)
		throw parse_error("bad token", 42);
	return recurse(depth + 1) + 1;  /* not a tail call: every frame stays on the stack */
}

static void rethrower()
{
	try {
		throw io_error("disk on fire");
	} catch (const std::exception &e) {
		std::printf("rethrower: caught '%s', rethrowing\n", e.what());
		throw;
	}
}

/* a member whose constructor throws: the members built before it are destroyed */
struct member {
	const char *name;
	explicit member(const char *n, bool fail = false) : name(n)
	{
		if (fail)
			throw std::logic_error("member failed");
		std::printf("  built %s\n", name);
	}
	~member() { std::printf("  destroyed %s\n", name); }
};
struct holder {
	member a{"a"}, b{"b"}, c{"c", true};
};

int main()
{
	std::printf("1. through 5 frames:\n");
	try {
		recurse(1);
	} catch (const app_error &e) {
		const parse_error *pe = dynamic_cast<const parse_error *>(&e);
		std::printf("caught app_error: '%s', parse_error=%s line=%d\n", e.what(), pe ? "yes" : "no",
		            pe ? pe->line : -1);
	}

	std::printf("2. rethrow:\n");
	try {
		rethrower();
	} catch (const parse_error &) {
		std::printf("WRONG: caught as parse_error\n");
	} catch (const io_error &e) {
		std::printf("caught io_error: '%s'\n", e.what());
	}

	std::printf("3. constructor throws:\n");
	try {
		holder h;
		std::printf("WRONG: holder built\n");
	} catch (const std::logic_error &e) {
		std::printf("caught logic_error: '%s'\n", e.what());
	}

	std::printf("4. nested:\n");
	try {
		try {
			throw parse_error("inner", 7);
		} catch (...) {
			std::throw_with_nested(std::runtime_error("outer"));
		}
	} catch (const std::runtime_error &e) {
		std::printf("caught '%s'", e.what());
		try {
			std::rethrow_if_nested(e);
		} catch (const parse_error &inner) {
			std::printf(", nested '%s' line %d\n", inner.what(), inner.line);
		}
	}

	std::printf("5. exception_ptr across threads:\n");
	std::vector<std::exception_ptr> errors(4);
	std::vector<std::thread> threads;
	for (int i = 0; i < 4; i++)
		threads.emplace_back([i, &errors] {
			try {
				if (i % 2)
					throw parse_error("thread " + std::to_string(i), i * 100);
				throw io_error("thread " + std::to_string(i));
			} catch (...) {
				errors[i] = std::current_exception();
			}
		});
	for (auto &t : threads)
		t.join();
	for (auto &ep : errors) {
		try {
			std::rethrow_exception(ep);
		} catch (const parse_error &e) {
			std::printf("parse_error '%s' line %d\n", e.what(), e.line);
		} catch (const app_error &e) {
			std::printf("app_error '%s'\n", e.what());
		}
	}

	std::printf("6. standard exceptions:\n");
	try {
		std::vector<int> v(3);
		(void)v.at(10);
	} catch (const std::out_of_range &) {
		std::printf("vector::at threw out_of_range\n");
	}
	try {
		(void)std::stoi("not a number");
	} catch (const std::invalid_argument &) {
		std::printf("stoi threw invalid_argument\n");
	}
	std::printf("uncaught_exceptions at end: %d\n", std::uncaught_exceptions());
	return 0;
}
