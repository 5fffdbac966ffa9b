/* A cursor in heap memory moved by a function called three times: its
 * fields (a typedef, an enum, an anonymous struct) are written five times
 * per call with no system call between. A watch -l on them is made inside
 * moveto, where pCur exists, and must reopen anywhere: at the start, where
 * neither pCur nor the heap does. */
#include <stdlib.h>

typedef unsigned char u8;
typedef long long i64;
enum state { VALID, INVALID, REQUIRESEEK };

typedef struct BtCursor {
	u8 eState;
	enum state st;
	i64 nKey;
	struct {
		int a;
	} pt;
} BtCursor;

static int moveto(BtCursor *pCur, int k)
{
	for (int i = 1; i <= 5; i++) {
		pCur->nKey = k * 10 + i;
		pCur->eState = (u8)(k * 5 + i);
		pCur->st = (enum state)((k + i) % 3);
		pCur->pt.a = k * 100 + i;
	}
	return pCur->eState;
}

int main(void)
{
	BtCursor *c = calloc(1, sizeof *c);
	int r = 0;
	for (int k = 0; k < 3; k++)
		r += moveto(c, k);
	free(c);
	return r & 1;
}
