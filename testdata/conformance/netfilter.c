// iptables' socket options, in a network namespace of its own: read the
// filter table (IPT_SO_GET_INFO, IPT_SO_GET_ENTRIES) and put it back
// (IPT_SO_SET_REPLACE), whose setsockopt writes the old counters through a
// pointer inside its struct: a setsockopt with an output. Without the
// rights or the ip_tables module, it says so and goes on.
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
// after netinet/in.h, whose definitions it then keeps
#include <linux/netfilter_ipv4/ip_tables.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int main(void) {
	if (unshare(CLONE_NEWNET) != 0) {
		printf("no network namespace: %s\nOK\n", strerror(errno));
		return 0;
	}
	int s = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	struct ipt_getinfo info;
	memset(&info, 0, sizeof info);
	strcpy(info.name, "filter");
	socklen_t l = sizeof info;
	if (s < 0 || getsockopt(s, IPPROTO_IP, IPT_SO_GET_INFO, &info, &l) != 0) {
		printf("no iptables: %s\nOK\n", strerror(errno));
		return 0;
	}
	printf("filter: %u entries, %u bytes\n", info.num_entries, info.size);
	socklen_t el = sizeof(struct ipt_get_entries) + info.size;
	struct ipt_get_entries *e = calloc(1, el);
	strcpy(e->name, "filter");
	e->size = info.size;
	int r = getsockopt(s, IPPROTO_IP, IPT_SO_GET_ENTRIES, e, &el);
	printf("IPT_SO_GET_ENTRIES %d\n", r);

	struct ipt_replace *rep = calloc(1, sizeof *rep + info.size);
	strcpy(rep->name, "filter");
	rep->valid_hooks = info.valid_hooks;
	rep->num_entries = info.num_entries;
	rep->size = info.size;
	memcpy(rep->hook_entry, info.hook_entry, sizeof rep->hook_entry);
	memcpy(rep->underflow, info.underflow, sizeof rep->underflow);
	rep->num_counters = info.num_entries;
	struct xt_counters *old = calloc(info.num_entries, sizeof *old);
	memset(old, 0xee, info.num_entries * sizeof *old);
	rep->counters = old;
	memcpy(rep->entries, e->entrytable, info.size);
	r = setsockopt(s, IPPROTO_IP, IPT_SO_SET_REPLACE, rep, sizeof *rep + info.size);
	int written = 1;
	for (unsigned i = 0; i < info.num_entries; i++)
		written &= old[i].pcnt != 0xeeeeeeeeeeeeeeeeULL;
	printf("IPT_SO_SET_REPLACE %d %s, old counters written: %d\n", r, r ? strerror(errno) : "", written);
	printf("OK\n");
	return 0;
}
