/* dlscale: a function named like one of a library the program loads with
   dlopen after main started. `break scale` set at the start has one
   location (this file's); the library's is added when it is loaded. */
#include <dlfcn.h>
#include <stdio.h>

static int __attribute__((noinline)) scale(int x)
{
	return x * 2;
}

int main(int argc, char **argv)
{
	int a = scale(argc);
	void *lib = dlopen(argc > 1 ? argv[1] : "libscale.so", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	int (*lib_scale)(int) = (int (*)(int))dlsym(lib, "lib_scale");
	int b = lib_scale(a);
	printf("a=%d b=%d\n", a, b);
	return 0;
}
