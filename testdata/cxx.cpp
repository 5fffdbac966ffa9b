// cxx.cpp: the C++ runtime. Exceptions thrown and caught across functions
// (libgcc's unwinder, libstdc++'s allocation of exception objects), and a
// std::map<std::string,int> filled from std::random_device (the rdrand
// instruction or getrandom, depending on the CPU and libstdc++; argv[1], if
// given, is random_device's token), printed in key order.
#include <iostream>
#include <map>
#include <random>
#include <stdexcept>
#include <string>

static int check(int v) {
	if (v % 3 == 0)
		throw std::runtime_error("multiple of three: " + std::to_string(v));
	return v;
}

static int guarded(int v) {
	try {
		return check(v);
	} catch (const std::runtime_error &e) {
		std::cout << "caught: " << e.what() << "\n";
		return -1;
	}
}

int main(int argc, char **argv) {
	std::random_device rd(argc > 1 ? argv[1] : "default");
	std::map<std::string, int> m;
	for (int i = 0; i < 8; i++) {
		unsigned v = rd();
		m["key" + std::to_string(v % 1000)] = guarded(static_cast<int>(v % 100));
	}
	for (const auto &kv : m)
		std::cout << kv.first << " = " << kv.second << "\n";
	try {
		throw std::logic_error("outer");
	} catch (const std::exception &e) {
		std::cout << "outer caught: " << e.what() << "\n";
	}
	return 0;
}
