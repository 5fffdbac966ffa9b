int util_b(int x)
{
	return x + 2;
}
