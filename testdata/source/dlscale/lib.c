/* The library of dlscale: its own scale, which lib_scale calls. */
int __attribute__((noinline)) scale(int x)
{
	return x * 3;
}

int lib_scale(int x)
{
	return scale(x) + 1;
}
