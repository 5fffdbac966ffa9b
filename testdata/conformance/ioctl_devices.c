// ioctls on devices whose requests say less than they do: TUNSETIFF is
// declared _IOW(int) but copies back the whole struct ifreq with the
// interface name the kernel chose ("rwtun%d" becomes "rwtun0"), and
// TUNGETIFF is declared _IOR(int) and writes an ifreq too; a serial line's
// TIOCGSERIAL, TIOCMGET, TIOCGICOUNT and termios. A machine without the
// device (no /dev/net/tun, no /dev/ttyS0) says so and goes on.
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/serial.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static void tun(void) {
	int fd = open("/dev/net/tun", O_RDWR);
	if (fd < 0) {
		printf("no tun: %s\n", strerror(errno));
		return;
	}
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	strcpy(ifr.ifr_name, "rwtun%d");
	int r = ioctl(fd, TUNSETIFF, &ifr);
	printf("TUNSETIFF %d, named %s\n", r, r ? strerror(errno) : (strncmp(ifr.ifr_name, "rwtun", 5) ? "?" : "rwtunN"));
	unsigned int features = 0;
	r = ioctl(fd, TUNGETFEATURES, &features);
	printf("TUNGETFEATURES %d, IFF_TUN %d\n", r, !!(features & IFF_TUN));
	struct ifreq got;
	memset(&got, 0, sizeof got);
	r = ioctl(fd, TUNGETIFF, &got);
	printf("TUNGETIFF %d, same name %d, flags %#x\n", r, !strcmp(got.ifr_name, ifr.ifr_name), got.ifr_flags & (IFF_TUN | IFF_NO_PI));
	close(fd);
}

static void serial(void) {
	int fd = open("/dev/ttyS0", O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		printf("no serial line: %s\n", strerror(errno));
		return;
	}
	struct serial_struct ss;
	int r = ioctl(fd, TIOCGSERIAL, &ss);
	printf("TIOCGSERIAL %d, type %d\n", r, r ? -1 : ss.type);
	int m = 0;
	r = ioctl(fd, TIOCMGET, &m);
	printf("TIOCMGET %d, %#x\n", r, r ? 0 : m);
	struct serial_icounter_struct ic;
	r = ioctl(fd, TIOCGICOUNT, &ic);
	printf("TIOCGICOUNT %d, rx %d\n", r, r ? -1 : ic.rx);
	struct termios t;
	r = tcgetattr(fd, &t);
	printf("tcgetattr %d, speed %u\n", r, r ? 0 : (unsigned)cfgetospeed(&t));
	close(fd);
}

int main(void) {
	tun();
	serial();
	printf("OK\n");
	return 0;
}
