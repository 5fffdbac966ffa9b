// values.cpp fills globals of C++ types (classes with bases, references,
// std::string, std::vector, templates), prints "ready", then blocks on
// stdin so a test can compare their rendering with gdb's.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace shapes {

struct Base {
	int id;
	const char *tag;
};

class Derived : public Base {
public:
	Derived(int &r) : x(0), ref(r) {}
	int x;
	int &ref;
};

template <typename A, typename B>
struct Pair {
	A first;
	B second;
};

enum class Mode : unsigned char { Off, On = 3 };

} // namespace shapes

int target = 5;
shapes::Derived derived(target);
std::string shortstr;
std::string longstr;
std::vector<int> vec;
std::vector<std::string> names;
shapes::Pair<int, double> pair;
shapes::Mode mode = shapes::Mode::On;
int &gref = target;
bool yes = true;
std::nullptr_t np = nullptr;

int main()
{
	derived.id = 7;
	derived.tag = "base";
	derived.x = 42;
	shortstr = "short";
	longstr = std::string(40, 'x') + "-tail";
	vec.reserve(4);
	for (int i = 1; i <= 3; i++)
		vec.push_back(i * i);
	names.push_back("alpha");
	names.push_back("beta");
	pair.first = 3;
	pair.second = 0.5;
	std::cout << "ready" << std::endl;
	std::string line;
	std::getline(std::cin, line);
	return 0;
}
