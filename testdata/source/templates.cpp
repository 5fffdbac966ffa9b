// Template and namespace frames for demangled backtraces.
#include <cstdio>
#include <string>
#include <vector>

namespace ns {
template <typename T>
T scale(T a, T b)
{
	T r = a * b;
	return r;
}

template <typename T>
T fn(T a, T b)
{
	T s = scale<T>(a, b);
	return s + a;
}
} // namespace ns

struct Shape {
	virtual ~Shape() {}
	int id;
};

struct Square : Shape {
	int side;
};

int main()
{
	std::string name = "squares";
	std::vector<int> v = {1, 2, 3};
	Square sq;
	sq.id = 7;
	sq.side = 4;
	Shape &ref = sq;
	int r = ns::fn<int>(v[1], sq.side);
	double d = ns::fn<double>(1.5, 2.0);
	std::printf("%s %d %g %d\n", name.c_str(), r, d, ref.id);
	return 0;
}
