// ioctl queries whose results replay injects: a pty's window size
// (TIOCGWINSZ, TCGETS), the virtual terminal queries (VT_GETSTATE,
// KDGKBTYPE, VT_GETMODE: ENOTTY on a pty; answered where /dev/tty0 can be
// opened), the interface queries (SIOCGIFCONF, SIOCGIFFLAGS, SIOCGIFINDEX,
// SIOCGIFMTU) and the bridge queries (SIOCGIFBR, a bridge's SIOCDEVPRIVATE)
// in a network namespace of its own when it may make one.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if_bridge.h>
#include <linux/kd.h>
#include <linux/sockios.h>
#include <linux/vt.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

static void vt(const char *what, int fd) {
	struct vt_stat vs;
	struct vt_mode vm;
	char kb = 0x5a;
	memset(&vs, 0x5a, sizeof vs);
	memset(&vm, 0x5a, sizeof vm);
	errno = 0;
	int a = ioctl(fd, VT_GETSTATE, &vs);
	int ea = errno;
	int b = ioctl(fd, KDGKBTYPE, &kb);
	int c = ioctl(fd, VT_GETMODE, &vm);
	printf("%s: VT_GETSTATE %d errno %d active %d state %#x; KDGKBTYPE %d %d; VT_GETMODE %d mode %d relsig %d\n",
	       what, a, ea, vs.v_active, vs.v_state, b, kb, c, vm.mode, vm.relsig);
}

static void bridges(int sk) {
	// Only in a namespace of our own: never touch the machine's network.
	if (unshare(CLONE_NEWNET) != 0) {
		printf("no network namespace\n");
		return;
	}
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	if (ioctl(s, SIOCBRADDBR, "rwbr0") != 0) {
		printf("no bridges\n");
		return;
	}
	int idx[8];
	memset(idx, 0x5a, sizeof idx);
	unsigned long args[3] = {BRCTL_GET_BRIDGES, (unsigned long)idx, 8};
	int n = ioctl(s, SIOCGIFBR, args);
	printf("bridges: %d, first index %d\n", n, idx[0]);
	struct __bridge_info bi;
	memset(&bi, 0x5a, sizeof bi);
	unsigned long a4[4] = {BRCTL_GET_BRIDGE_INFO, (unsigned long)&bi, 0, 0};
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "rwbr0");
	ifr.ifr_data = (char *)a4;
	int r = ioctl(s, SIOCDEVPRIVATE, &ifr);
	printf("bridge info %d: hello %u forward delay %u stp %d\n", r, bi.hello_time, bi.forward_delay, bi.stp_enabled);
	int ports[4];
	memset(ports, 0x5a, sizeof ports);
	unsigned long p4[4] = {BRCTL_GET_PORT_LIST, (unsigned long)ports, 4, 0};
	ifr.ifr_data = (char *)p4;
	r = ioctl(s, SIOCDEVPRIVATE, &ifr);
	printf("port list %d: %d %d\n", r, ports[0], ports[3]);
	close(s);
	(void)sk;
}

int main(void) {
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) || unlockpt(m))
		return 1;
	int s = open(ptsname(m), O_RDWR | O_NOCTTY);
	struct winsize ws = {.ws_row = 33, .ws_col = 101, .ws_xpixel = 640};
	ioctl(m, TIOCSWINSZ, &ws);
	memset(&ws, 0x5a, sizeof ws);
	int r = ioctl(s, TIOCGWINSZ, &ws);
	printf("TIOCGWINSZ %d: %d rows %d cols %d x %d\n", r, ws.ws_row, ws.ws_col, ws.ws_xpixel, ws.ws_ypixel);
	struct termios tio;
	memset(&tio, 0x5a, sizeof tio);
	r = tcgetattr(s, &tio);
	printf("TCGETS %d: lflag %#x cc[VINTR] %d\n", r, tio.c_lflag, tio.c_cc[VINTR]);
	vt("pty", s);
	int t0 = open("/dev/tty0", O_RDONLY | O_NOCTTY);
	if (t0 >= 0)
		vt("tty0", t0);

	int sk = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr[16];
	memset(ifr, 0x5a, sizeof ifr);
	struct ifconf ifc = {.ifc_len = sizeof ifr, .ifc_req = ifr};
	r = ioctl(sk, SIOCGIFCONF, &ifc);
	printf("SIOCGIFCONF %d: %d interfaces\n", r, ifc.ifc_len / (int)sizeof(struct ifreq));
	for (int i = 0; r == 0 && i < ifc.ifc_len / (int)sizeof(struct ifreq); i++) {
		struct ifreq q;
		memset(&q, 0x5a, sizeof q);
		strcpy(q.ifr_name, ifr[i].ifr_name);
		int a = ioctl(sk, SIOCGIFFLAGS, &q);
		int flags = q.ifr_flags;
		memset(&q, 0x5a, sizeof q);
		strcpy(q.ifr_name, ifr[i].ifr_name);
		int b = ioctl(sk, SIOCGIFINDEX, &q);
		int index = q.ifr_ifindex;
		memset(&q, 0x5a, sizeof q);
		strcpy(q.ifr_name, ifr[i].ifr_name);
		int c = ioctl(sk, SIOCGIFMTU, &q);
		printf("interface %s: flags %d %#x index %d %d mtu %d %d\n", ifr[i].ifr_name, a, flags, b, index, c, q.ifr_mtu);
	}
	bridges(sk);
	printf("OK\n");
	return 0;
}
