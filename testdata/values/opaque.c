/* opaque.c defines the struct values.c only declares, so the debugger must
 * find the definition in another compilation unit. */
struct opaque {
	int secret;
	const char *label;
};

struct opaque *make_opaque(int n)
{
	static struct opaque o;
	o.secret = n;
	o.label = "hidden";
	return &o;
}
