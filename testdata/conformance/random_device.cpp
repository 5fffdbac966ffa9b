// std::random_device with each token libstdc++ knows on x86: "default"
// (rdseed or rdrand where cpuid shows them, else getrandom), "rdrand",
// "rdseed", "hw", "getrandom", "/dev/urandom". Where cpuid shows the
// instructions and rewind cannot trap cpuid, they are patched into traps whose
// values are recorded, so every number printed replays byte for byte.
#include <cstdio>
#include <exception>
#include <random>
#include <string>

int main() {
	const char *tokens[] = {"default", "rdrand", "rdseed", "hw", "getrandom", "/dev/urandom"};
	for (const char *tok : tokens) {
		try {
			std::random_device rd(tok);
			std::mt19937_64 gen(rd());
			std::uniform_int_distribution<int> dist(1, 6);
			unsigned a = rd(), b = rd();
			std::printf("%s: entropy %g values %08x %08x dice %d %d %d\n", tok, rd.entropy(), a, b, dist(gen),
			            dist(gen), dist(gen));
		} catch (const std::exception &e) {
			// A token this CPU or libstdc++ does not offer.
			std::printf("%s: unavailable (%s)\n", tok, e.what());
		}
	}
	std::printf("OK\n");
	return 0;
}
