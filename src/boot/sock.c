#include "wire.h"
#include "efabench/status.h"
#include "core/clock.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

static int wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	int rc;

	for (;;) {
		rc = poll(&p, 1, eb_ms_left(deadline, 1000));
		if (rc > 0)
			return EB_OK;
		if (rc < 0 && errno != EINTR)
			return EB_ESYS;
		if (eb_now_ns() >= deadline)
			return EB_ETIMEDOUT;
	}
}

int eb_sock_read(int fd, void *buf, size_t len, uint64_t deadline)
{
	char *p = buf;
	int rc;

	while (len > 0) {
		ssize_t n = recv(fd, p, len, MSG_DONTWAIT);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return EB_EPEER;
		if (errno == ECONNRESET)
			return EB_EPEER;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return EB_ESYS;
		rc = wait_fd(fd, POLLIN, deadline);
		if (rc != EB_OK)
			return rc;
	}
	return EB_OK;
}

int eb_sock_write(int fd, const void *buf, size_t len, uint64_t deadline)
{
	const char *p = buf;
	int rc;

	while (len > 0) {
		/* MSG_NOSIGNAL: a peer that already left must not kill us with SIGPIPE. */
		ssize_t n = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
			return EB_EPEER;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return EB_ESYS;
		rc = wait_fd(fd, POLLOUT, deadline);
		if (rc != EB_OK)
			return rc;
	}
	return EB_OK;
}

int eb_wire_send(int fd, uint32_t type, int32_t arg, const void *data, uint64_t len,
		 uint64_t deadline)
{
	struct eb_wire_hdr h = {.type = type, .arg = arg, .len = len};
	int rc = eb_sock_write(fd, &h, sizeof(h), deadline);

	if (rc == EB_OK && len > 0)
		rc = eb_sock_write(fd, data, (size_t)len, deadline);
	return rc;
}
