// flags: -std=c++20
/* cxx_iostream_locale: iostream manipulators, std::string, stringstream parsing, the classic
 * locale and its facets, a custom numpunct facet and std::to_chars (std::format: cxx_format.cpp). */
#include <charconv>
#include <iomanip>
#include <iostream>
#include <locale>
#include <sstream>
#include <string>
#include <system_error>

/* digits grouped by three with an apostrophe, decimal comma */
struct swiss_punct : std::numpunct<char> {
	char do_thousands_sep() const override { return '\''; }
	char do_decimal_point() const override { return ','; }
	std::string do_grouping() const override { return "\3"; }
	std::string do_truename() const override { return "ja"; }
};

static std::string shortest(double v)
{
	char buf[64];
	auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
	return ec == std::errc() ? std::string(buf, end) : "to_chars failed";
}

int main()
{
	std::cout << "[" << std::setw(6) << 42 << "] [" << std::left << std::setw(6) << 42 << std::right
	          << "] [" << std::setfill('0') << std::setw(6) << -42 << std::setfill(' ') << "]\n";
	std::cout << std::hex << std::showbase << 255 << " " << std::oct << 8 << std::dec << std::noshowbase
	          << " " << std::boolalpha << true << " " << std::noboolalpha << false << "\n";
	std::cout << std::fixed << std::setprecision(3) << 3.14159 << " " << std::scientific << 12345.678
	          << std::defaultfloat << std::setprecision(6) << " " << 0.5 << "\n";

	std::string s = "hello, world";
	s.replace(s.find("world"), 5, "libc++");
	s += '!';
	std::cout << s << " size=" << s.size() << " substr=" << s.substr(7, 6)
	          << " rfind(l)=" << s.rfind('l') << "\n";

	std::istringstream in("42 3.5 word -7");
	int a = 0, b = 0;
	double d = 0;
	std::string w;
	in >> a >> d >> w >> b;
	std::cout << "parsed: " << a << " " << d << " " << w << " " << b << " ok=" << !in.fail() << "\n";
	in >> a;
	std::cout << "read past end: fail=" << in.fail() << " eof=" << in.eof() << "\n";

	const std::locale &classic = std::locale::classic();
	const auto &np = std::use_facet<std::numpunct<char>>(classic);
	std::cout << "classic: name=" << classic.name() << " decimal='" << np.decimal_point()
	          << "' thousands='" << np.thousands_sep() << "' grouping=" << np.grouping().size()
	          << " truename=" << np.truename() << "\n";
	const auto &ct = std::use_facet<std::ctype<char>>(classic);
	std::string up = "Mixed Case 123";
	ct.toupper(&up[0], &up[0] + up.size());
	std::cout << "ctype toupper: " << up << " isdigit('7')=" << ct.is(std::ctype_base::digit, '7') << "\n";

	std::ostringstream out;
	out.imbue(std::locale(classic, new swiss_punct));
	out << 1234567 << " " << std::fixed << std::setprecision(2) << 1234.5 << " " << std::boolalpha << true;
	std::cout << "custom numpunct: " << out.str() << "\n";
	std::istringstream grouped("9'876'543");
	grouped.imbue(std::locale(classic, new swiss_punct));
	long g = 0;
	grouped >> g;
	std::cout << "parse grouped: " << g << "\n";

	std::cout << "to_chars: " << shortest(0.1) << " " << shortest(1.0 / 3) << " " << shortest(1e21) << " "
	          << shortest(123.456) << " " << shortest(-0.0) << " " << shortest(5e-324) << "\n";
	char buf[32];
	auto r = std::to_chars(buf, buf + sizeof buf, 2.5, std::chars_format::fixed, 3);
	std::cout << "to_chars fixed 3: " << std::string(buf, r.ptr) << "\n";
	long back = 0;
	std::string text = "-ff7x";
	auto fr = std::from_chars(text.data(), text.data() + text.size(), back, 16);
	std::cout << "from_chars hex: " << back << " stopped at '" << *fr.ptr << "'\n";
	return 0;
}
