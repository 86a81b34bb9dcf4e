// requires: files
/* cxx_filesystem: std::filesystem in a fresh directory under /tmp: create directories and
 * files, iterate (sorted), sizes, rename, copy, symlinks, errors, remove_all. Paths are printed
 * in their generic form (Windows' native one has backslashes and wide characters); Windows
 * makes symbolic links only with a privilege programs do not have by default, so there the
 * links are left out. */
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <system_error>
#include <vector>

namespace fs = std::filesystem;

static void write(const fs::path &p, size_t bytes)
{
	std::ofstream(p, std::ios::binary) << std::string(bytes, 'x');
}

static std::vector<std::string> listing(const fs::path &dir, bool recursive)
{
	std::vector<std::string> names;
	auto add = [&](const fs::directory_entry &e) {
		std::string kind = e.is_symlink() ? "link" : e.is_directory() ? "dir" : "file";
		std::string size = e.is_regular_file() && !e.is_symlink() ? " " + std::to_string(e.file_size()) : "";
		names.push_back(e.path().lexically_relative(dir).generic_string() + " (" + kind + size + ")");
	};
	if (recursive)
		for (const auto &e : fs::recursive_directory_iterator(dir))
			add(e);
	else
		for (const auto &e : fs::directory_iterator(dir))
			add(e);
	std::sort(names.begin(), names.end());
	return names;
}

static void show(const char *title, const std::vector<std::string> &names)
{
	std::printf("%s:", title);
	for (const auto &n : names)
		std::printf(" %s;", n.c_str());
	std::printf("\n");
}

int main()
{
	fs::path p = "/usr/lib/../include/./stdio.h";
	std::printf("path: filename=%s stem=%s extension=%s parent=%s normal=%s\n",
	            p.filename().generic_string().c_str(), p.stem().generic_string().c_str(),
	            p.extension().generic_string().c_str(), p.parent_path().generic_string().c_str(),
	            p.lexically_normal().generic_string().c_str());
	std::printf("path: join=%s relative=%s\n", (fs::path("a") / "b" / "c.txt").generic_string().c_str(),
	            fs::path("/a/b/c").lexically_relative("/a/x").generic_string().c_str());

	/* a fresh name: random, where WASI has no process ids */
	fs::path base = fs::temp_directory_path() / ("crossroot-fs-" + std::to_string(std::random_device{}()));
	fs::remove_all(base);
	if (!fs::create_directories(base / "sub" / "deeper")) {
		std::printf("create_directories failed\n");
		return 1;
	}
	fs::create_directory(base / "empty");
	write(base / "a.txt", 10);
	write(base / "b.dat", 1234);
	write(base / "sub" / "c.txt", 0);
	write(base / "sub" / "deeper" / "d.txt", 77);
#ifndef _WIN32
	fs::create_symlink("a.txt", base / "link-to-a");
#endif
	show("top level", listing(base, false));
	show("recursive", listing(base, true));

	std::printf("file_size(b.dat)=%ju is_directory(sub)=%d is_regular_file(sub)=%d exists(nope)=%d\n",
	            (std::uintmax_t)fs::file_size(base / "b.dat"), fs::is_directory(base / "sub"),
	            fs::is_regular_file(base / "sub"), fs::exists(base / "nope"));
#ifndef _WIN32
	std::printf("read_symlink=%s, size through link=%ju\n",
	            fs::read_symlink(base / "link-to-a").generic_string().c_str(),
	            (std::uintmax_t)fs::file_size(base / "link-to-a"));
#endif

	fs::rename(base / "b.dat", base / "sub" / "moved.dat");
	fs::copy_file(base / "a.txt", base / "empty" / "copy.txt");
	fs::resize_file(base / "a.txt", 3);
	show("after rename, copy, resize", listing(base, true));

	std::error_code ec;
	(void)fs::file_size(base / "missing", ec);
	std::printf("error_code for missing file: %s\n",
	            ec == std::errc::no_such_file_or_directory ? "no_such_file_or_directory" : "WRONG");
#if __cpp_exceptions
	try {
		(void)fs::file_size(base / "missing");
		std::printf("WRONG: no exception\n");
	} catch (const fs::filesystem_error &e) {
		std::printf("filesystem_error: %s, path1 is %s\n",
		            e.code() == std::errc::no_such_file_or_directory ? "no_such_file_or_directory" : "WRONG",
		            e.path1() == base / "missing" ? "the missing file" : "WRONG");
	}
#else
	std::printf("filesystem_error: not thrown, the platform has no C++ exceptions\n");
#endif
	bool removed = fs::remove(base / "empty", ec);
	std::printf("remove(non-empty dir) with error_code: %d, error set: %d\n", removed, (bool)ec);
#ifndef _WIN32
	removed = fs::remove(base / "link-to-a");
	std::printf("remove(link-to-a)=%d, a.txt still exists=%d\n", removed, fs::exists(base / "a.txt"));
#endif
	std::uintmax_t count = fs::remove_all(base);
	std::printf("remove_all removed %ju entries, base exists=%d\n", count, fs::exists(base));
	return 0;
}
