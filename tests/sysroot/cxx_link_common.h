/* cxx_link_common.h: the program of cxx_static.cpp and cxx_dynamic.cpp: containers, strings,
 * sorting, a virtual call and an exception, so both link modes of the C++ runtime are used. */
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct shape {
	virtual ~shape() = default;
	virtual std::string name() const = 0;
	virtual long area() const = 0;
};
struct rect : shape {
	long w, h;
	rect(long w, long h) : w(w), h(h) {}
	std::string name() const override { return "rect " + std::to_string(w) + "x" + std::to_string(h); }
	long area() const override { return w * h; }
};
struct square : rect {
	explicit square(long s) : rect(s, s) {}
	std::string name() const override { return "square " + std::to_string(w); }
};

static long checked_area(const shape &s)
{
	if (s.area() > 1000)
		throw std::range_error(s.name() + " is too big");
	return s.area();
}

int run_program()
{
	std::vector<std::unique_ptr<shape>> shapes;
	shapes.push_back(std::make_unique<rect>(3, 7));
	shapes.push_back(std::make_unique<square>(4));
	shapes.push_back(std::make_unique<rect>(50, 40));
	shapes.push_back(std::make_unique<square>(2));
	std::sort(shapes.begin(), shapes.end(), [](const auto &a, const auto &b) { return a->area() < b->area(); });

	std::map<std::string, long> areas;
	for (const auto &s : shapes) {
		try {
			areas[s->name()] = checked_area(*s);
		} catch (const std::range_error &e) {
			std::printf("exception: %s\n", e.what());
		}
	}
	for (const auto &s : shapes)
		std::printf("sorted by area: %s\n", s->name().c_str());
	for (const auto &[name, area] : areas)
		std::printf("map: %s -> %ld\n", name.c_str(), area);

	std::vector<int> v{5, 3, 9, 1, 7, 3};
	std::sort(v.begin(), v.end(), std::greater<int>());
	v.erase(std::unique(v.begin(), v.end()), v.end());
	std::string joined;
	for (int x : v)
		joined += (joined.empty() ? "" : ",") + std::to_string(x);
	std::printf("sorted unique descending: %s\n", joined.c_str());
	return 0;
}
