int util_a(int x)
{
	return x + 1;
}
