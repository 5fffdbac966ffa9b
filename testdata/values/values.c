/* values.c fills globals of many C types, prints "ready", then blocks on
 * stdin so a test can read the globals of the live process and compare
 * its rendering with gdb's. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

struct node {
	char name[8];
	struct node *next;
	int x : 3;
	unsigned y : 5;
};

typedef struct node node_t;

union number {
	int i;
	float f;
	unsigned char b[4];
};

enum color { RED, GREEN = 5, BLUE };

struct point {
	double x, y;
	enum color c;
	bool visible;
};

struct holder {
	int len;
	int data[]; /* flexible array member: no bound */
};

/* Defined in opaque.c: this unit only sees the declaration. */
struct opaque;
struct opaque *make_opaque(int n);

int sum(int a, int b) { return a + b; }

node_t n1, n2;
struct node *head;
union number num;
enum color col = BLUE;
enum color badcol;
int grid[2][3];
const char *greeting;
char *nullstr;
char sbuf[32];
int (*fp)(int, int);
int zeros[20];
int mixed[16];
double dbl;
float flt;
bool flag = true;
unsigned char uc;
char ch = 'A';
long neg;
unsigned long big;
short sh = -7;
int *iptr;
struct point pt;
struct point pts[2];
volatile int vol = 9;
const int cint = 11;
struct holder *hold;
void *vp;
struct opaque *op;

int main(void)
{
	strcpy(n1.name, "first");
	strcpy(n2.name, "second");
	n1.next = &n2;
	n1.x = -3;
	n1.y = 17;
	n2.x = 2;
	n2.y = 31;
	head = &n1;
	num.i = 0x3f800000; /* 1.0f */
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			grid[i][j] = i * 10 + j;
	greeting = strdup("hello, world");
	strcpy(sbuf, "hi");
	fp = sum;
	for (int i = 0; i < 16; i++)
		mixed[i] = i < 2 ? i + 1 : 7;
	dbl = 0.1;
	flt = 1.25f;
	uc = 200;
	neg = -42;
	big = 18446744073709551615UL;
	iptr = &mixed[1];
	pt.x = 1.5;
	pt.y = -2;
	pt.c = GREEN;
	pt.visible = true;
	pts[0] = pt;
	pts[1].x = 3;
	pts[1].c = RED;
	badcol = (enum color)42;
	hold = malloc(sizeof(struct holder) + 3 * sizeof(int));
	hold->len = 3;
	vp = hold;
	op = make_opaque(5);
	printf("ready %d\n", sum(1, 2));
	fflush(stdout);
	char line[16];
	fgets(line, sizeof line, stdin);
	return 0;
}
