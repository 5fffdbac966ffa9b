// bpf by what it writes: maps (array, hash, per-CPU array) created, updated,
// looked up (value written by the kernel), walked with GET_NEXT_KEY,
// batch-looked-up and LOOKUP_AND_DELETE'd; a socket filter loaded with a
// verifier log, one the verifier rejects (EACCES, with its log written all
// the same), run with PROG_TEST_RUN; OBJ_GET_INFO_BY_FD of a map and of a
// program (with its translated instructions and map ids); MAP_GET_NEXT_ID.
// Without privilege bpf fails (EPERM), and that is replayed.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long bpf(int cmd, union bpf_attr *a) { return syscall(SYS_bpf, cmd, a, sizeof *a); }

static int map_create(int type, int key, int value, int max) {
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = max;
	return bpf(BPF_MAP_CREATE, &a);
}

static long elem(int cmd, int fd, void *key, void *value, uint64_t flags) {
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_fd = fd;
	a.key = (uintptr_t)key;
	a.value = (uintptr_t)value;
	a.flags = flags;
	return bpf(cmd, &a);
}

static int prog_load(struct bpf_insn *insns, int n, char *log, int logsize) {
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t) "GPL";
	a.log_level = 1;
	a.log_buf = (uintptr_t)log;
	a.log_size = logsize;
	return bpf(BPF_PROG_LOAD, &a);
}

// obj_info asks the kernel what the object fd is into info, *len bytes
// long, and sets *len to the length the kernel filled.
static long obj_info(int fd, void *info, uint32_t *len) {
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.info.bpf_fd = fd;
	a.info.info_len = *len;
	a.info.info = (uintptr_t)info;
	long r = bpf(BPF_OBJ_GET_INFO_BY_FD, &a);
	*len = a.info.info_len;
	return r;
}

int main(void) {
	int bad = 0;
	int arr = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4);
	if (arr < 0) {
		printf("bpf unavailable: %s\n", strerror(errno));
		printf("OK\n");
		return 0;
	}
	for (uint32_t k = 0; k < 4; k++) {
		uint64_t v = 1000 + k * k;
		elem(BPF_MAP_UPDATE_ELEM, arr, &k, &v, BPF_ANY);
	}
	uint32_t k = 2, next = 99;
	uint64_t v = 0;
	long r = elem(BPF_MAP_LOOKUP_ELEM, arr, &k, &v, 0);
	printf("lookup 2: %ld %llu\n", r, (unsigned long long)v);
	bad |= v != 1004;
	k = 1;
	elem(BPF_MAP_GET_NEXT_KEY, arr, &k, &next, 0);
	printf("next key after 1: %u\n", next);
	bad |= next != 2;
	elem(BPF_MAP_GET_NEXT_KEY, arr, NULL, &next, 0);
	printf("first key: %u\n", next);

	int hash = map_create(BPF_MAP_TYPE_HASH, 4, 16, 8);
	char val[16] = "hash value";
	k = 7;
	elem(BPF_MAP_UPDATE_ELEM, hash, &k, val, BPF_ANY);
	k = 8;
	errno = 0;
	r = elem(BPF_MAP_LOOKUP_ELEM, hash, &k, val, 0);
	printf("missing key: %ld %s\n", r, strerror(errno));
	bad |= r != -1 || errno != ENOENT;
	k = 7;
	char got[16] = {0};
	uint32_t keys[8] = {0}, out = 0;
	char vals[8][16];
	union bpf_attr b;
	memset(&b, 0, sizeof b);
	b.batch.map_fd = hash;
	b.batch.out_batch = (uintptr_t)&out;
	b.batch.keys = (uintptr_t)keys;
	b.batch.values = (uintptr_t)vals;
	b.batch.count = 8;
	long br = bpf(BPF_MAP_LOOKUP_BATCH, &b);
	printf("batch: %ld %s, count %u, key %u, value %s\n", br, br ? strerror(errno) : "", b.batch.count, keys[0], vals[0]);
	long ld = elem(BPF_MAP_LOOKUP_AND_DELETE_ELEM, hash, &k, got, 0);
	printf("lookup and delete: %ld %s\n", ld, got);
	errno = 0;
	r = elem(BPF_MAP_LOOKUP_ELEM, hash, &k, got, 0);
	printf("then missing: %ld %s\n", r, strerror(errno));

	int pcpu = map_create(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t *per = calloc(ncpu + 64, 8);
	k = 0;
	long pr = elem(BPF_MAP_LOOKUP_ELEM, pcpu, &k, per, 0);
	printf("per-CPU lookup: %ld, all zero: %d\n", pr, per[0] == 0);

	struct bpf_insn ok[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0}, // r0 = 0
		{.code = BPF_JMP | BPF_EXIT},
	};
	struct bpf_insn wrong[] = {{.code = BPF_JMP | BPF_EXIT}}; // r0 never set
	char log[4096];
	memset(log, 0, sizeof log);
	int prog = prog_load(ok, 2, log, sizeof log);
	printf("load: %s, log says processed: %d\n", prog >= 0 ? "ok" : strerror(errno), strstr(log, "processed") != NULL);
	memset(log, 0, sizeof log);
	errno = 0;
	int rej = prog_load(wrong, 1, log, sizeof log);
	printf("rejected: %d %s, log names R0: %d\n", rej, strerror(errno), strstr(log, "R0") != NULL);
	bad |= rej != -1 || strstr(log, "R0") == NULL;

	if (prog >= 0) {
		unsigned char pkt[64] = {0}, outp[64] = {0};
		union bpf_attr t;
		memset(&t, 0, sizeof t);
		t.test.prog_fd = prog;
		t.test.data_in = (uintptr_t)pkt;
		t.test.data_size_in = sizeof pkt;
		t.test.data_out = (uintptr_t)outp;
		t.test.data_size_out = sizeof outp;
		t.test.repeat = 1;
		long tr = bpf(BPF_PROG_TEST_RUN, &t);
		printf("test run: %ld retval %u data out %u\n", tr, t.test.retval, t.test.data_size_out);

		struct bpf_prog_info pi;
		uint64_t insns[8] = {0};
		uint32_t ids[4] = {0};
		memset(&pi, 0, sizeof pi);
		pi.xlated_prog_len = sizeof insns;
		pi.xlated_prog_insns = (uintptr_t)insns;
		pi.nr_map_ids = 4;
		pi.map_ids = (uintptr_t)ids;
		uint32_t len = sizeof pi;
		long ir = obj_info(prog, &pi, &len);
		printf("prog info: %ld type %u, xlated %u bytes, first insn %#llx, maps %u\n", ir, pi.type, pi.xlated_prog_len, (unsigned long long)insns[0], pi.nr_map_ids);
		bad |= ir != 0 || pi.type != BPF_PROG_TYPE_SOCKET_FILTER;
	}
	struct bpf_map_info mi;
	memset(&mi, 0, sizeof mi);
	uint32_t len = sizeof mi;
	long mr = obj_info(hash, &mi, &len);
	printf("map info: %ld key %u value %u max %u, info_len %u\n", mr, mi.key_size, mi.value_size, mi.max_entries, len);
	bad |= mi.key_size != 4 || mi.value_size != 16;
	union bpf_attr n;
	memset(&n, 0, sizeof n);
	long nr = bpf(BPF_MAP_GET_NEXT_ID, &n);
	printf("a map id exists: %d\n", nr == 0 && n.next_id > 0);
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
