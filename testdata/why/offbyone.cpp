// offbyone.cpp: a loop that runs one element too far (<= for <) zeroes
// the count stored after the array, and the average divides by it.
#include <cstdio>

struct Samples {
	int vals[10];
	int count;
};

__attribute__((noinline)) static void reset(Samples &s)
{
	for (int i = 0; i <= 10; i++) // off by one: vals has 10 elements
		s.vals[i] = 0;
}

__attribute__((noinline)) static int average(const Samples &s)
{
	int sum = 0;
	for (int i = 0; i < 10; i++)
		sum += s.vals[i];
	return sum / s.count;
}

int main()
{
	Samples s;
	s.count = 10;
	reset(s);
	for (int i = 0; i < 10; i++)
		s.vals[i] = i;
	std::printf("average %d\n", average(s));
	return 0;
}
