/* A shared library with thread-local variables: their blocks are found
   through the loader's dtv, not at a fixed offset like the executable's. */
__thread int lib_counter = 7;
__thread char lib_tag[16] = "initial";

int *lib_bump(int by, const char *tag)
{
	lib_counter += by;
	for (int i = 0; i < 15 && tag[i]; i++) {
		lib_tag[i] = tag[i];
		lib_tag[i + 1] = '\0';
	}
	return &lib_counter;
}
