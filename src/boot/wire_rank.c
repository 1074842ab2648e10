/* Rank side of the hub protocol: collectives are request/response over one stream socket;
 * an ABORT frame may arrive in place of any response, or while the rank polls check(). */
#include "wire.h"
#include "efabench/boot.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

static int report_abort(struct eb_wire_rank *w, const struct eb_wire_hdr *h)
{
	char reason[256] = "";
	size_t n = h->len < sizeof(reason) - 1 ? (size_t)h->len : sizeof(reason) - 1;

	/* The reason is short and already on its way; a second of patience is plenty. */
	if (eb_sock_read(w->fd, reason, n, eb_deadline(1.0)) != EB_OK)
		reason[0] = '\0';
	if (!w->lost) {
		if (h->arg >= 0)
			eb_err("lost rank %d: %s", h->arg, reason);
		else
			eb_err("job aborted: %s", reason);
	}
	w->lost = 1;
	return EB_EPEER;
}

#define ANSWER_S 2.0 /* how long a rank that timed out waits for the hub to say it is there */

/* A collective timed out: the hub is waiting for an absent rank (it names it once we leave),
 * or the hub itself is stopped or hung, which only silence tells. */
static int timed_out(struct eb_wire_rank *w, const char *what)
{
	const char *hub = w->hub_name ? w->hub_name : "the launcher";
	struct eb_wire_hdr h;
	uint64_t until = eb_deadline(ANSWER_S);
	int rc = eb_wire_send(w->fd, EB_WIRE_PING, 0, NULL, 0, until);

	if (rc == EB_OK)
		rc = eb_sock_read(w->fd, &h, sizeof(h), until);
	if (rc == EB_OK && h.type == EB_WIRE_ABORT)
		return report_abort(w, &h);
	if (rc == EB_OK) { /* the PONG, or a reply just too late: the hub is there */
		eb_err("bootstrap %s timed out waiting for the other ranks", what);
		return EB_ETIMEDOUT;
	}
	eb_err("bootstrap %s timed out, and %s did not answer within %.0f s (stopped or hung)",
	       what, hub, ANSWER_S);
	w->lost = 1; /* every later collective fails at once instead of waiting again */
	return EB_ETIMEDOUT;
}

/* poll() of one descriptor for up to ms milliseconds, in slices of one while the rank has
 * idle work (its engines' progress: eb_boot_idle_add). */
static int poll_idle(struct eb_boot *b, struct pollfd *p, int ms)
{
	int n;

	if (b->nidle == 0)
		return poll(p, 1, ms);
	do {
		n = poll(p, 1, ms > 0 ? 1 : 0);
		if (n != 0)
			return n;
		eb_boot_idle(b);
	} while (--ms > 0);
	return 0;
}

/* Until the connection has something to read (EB_OK) or the deadline passes. A collective may
 * wait long (a phase's whole length); with ping_ns set the hub is asked every ping_ns whether
 * it is still there, and a silent one ends the wait at once, named (EB_EPEER, lost set). */
static int await_frame(struct eb_boot *b, struct eb_wire_rank *w, uint64_t deadline,
		       const char *what)
{
	for (;;) {
		uint64_t now = eb_now_ns(), until = deadline, answer_by;
		struct pollfd p = {.fd = w->fd, .events = POLLIN};
		int asked = 0, n;

		if (w->ping_ns > 0 && now + w->ping_ns < deadline)
			until = now + w->ping_ns;
		n = poll_idle(b, &p, now >= until ? 0 : (int)((until - now) / 1000000 + 1));
		if (n > 0)
			return EB_OK;
		if (n < 0 && errno != EINTR)
			return EB_ESYS;
		if (eb_now_ns() < until)
			continue; /* EINTR, or woken a little early */
		if (until == deadline)
			return EB_ETIMEDOUT;
		answer_by = eb_deadline(ANSWER_S);
		asked = eb_wire_send(w->fd, EB_WIRE_PING, 0, NULL, 0, answer_by) == EB_OK;
		p.revents = 0;
		while (asked && (n = poll(&p, 1, 100)) == 0 && eb_now_ns() < answer_by)
			;
		if (asked && n > 0)
			continue; /* the hub speaks: keep waiting for the result */
		eb_err("bootstrap %s: %s did not answer within %.0f s while we waited (stopped or "
		       "hung)",
		       what, w->hub_name ? w->hub_name : "the launcher", ANSWER_S);
		w->lost = 1;
		return EB_EPEER;
	}
}

static int read_header(struct eb_boot *b, struct eb_wire_rank *w, struct eb_wire_hdr *h,
		       uint64_t deadline, const char *what)
{
	int rc;

	for (;;) { /* answers to an earlier question may still be on their way */
		rc = await_frame(b, w, deadline, what);
		if (rc == EB_OK)
			rc = eb_sock_read(w->fd, h, sizeof(*h), deadline);
		if (rc != EB_OK || h->len != 0 ||
		    (h->type != EB_WIRE_PONG && h->type != EB_WIRE_PING))
			break;
		if (h->type == EB_WIRE_PING) /* the hub asks whether we are here */
			(void)eb_wire_send(w->fd, EB_WIRE_PONG, 0, NULL, 0, eb_deadline(1.0));
	}

	if (rc == EB_EPEER) {
		if (!w->lost)
			eb_err("lost %s (bootstrap connection closed during %s)",
			       w->hub_name ? w->hub_name : "the launcher", what);
		w->lost = 1;
		return rc;
	}
	if (rc == EB_ETIMEDOUT)
		return timed_out(w, what);
	if (rc != EB_OK) {
		eb_err("bootstrap %s: reading from %s failed", what,
		       w->hub_name ? w->hub_name : "the launcher");
		return rc;
	}
	if (h->type == EB_WIRE_ABORT)
		return report_abort(w, h);
	return EB_OK;
}

static int exchange(struct eb_boot *b, uint32_t type, const void *in, size_t in_len, void *out,
		    size_t out_len, uint64_t deadline, const char *what)
{
	struct eb_wire_rank *w = b->impl;
	struct eb_wire_hdr h;
	int rc;

	if (w->lost)
		return EB_EPEER;
	w->seq++;
	rc = eb_wire_send(w->fd, type, w->seq, in, in_len, deadline);
	if (rc != EB_OK) {
		if (!w->lost && rc == EB_EPEER)
			eb_err("lost %s (bootstrap connection closed during %s)",
			       w->hub_name ? w->hub_name : "the launcher", what);
		else if (!w->lost)
			eb_err("bootstrap %s: cannot reach %s (%s)", what,
			       w->hub_name ? w->hub_name : "the launcher", eb_strerror(rc));
		w->lost = rc == EB_EPEER;
		return rc;
	}
	rc = read_header(b, w, &h, deadline, what);
	if (rc != EB_OK)
		return rc;
	if (h.type != EB_WIRE_RESULT || h.arg != w->seq || h.len != out_len) {
		eb_err("bootstrap %s: unexpected reply (type %u, seq %d, %llu bytes)", what, h.type,
		       h.arg, (unsigned long long)h.len);
		return EB_EPROTO;
	}
	rc = eb_sock_read(w->fd, out, out_len, deadline);
	if (rc != EB_OK)
		eb_err("bootstrap %s: reply cut short (%s)", what, eb_strerror(rc));
	return rc;
}

int eb_wire_allgather(struct eb_boot *b, const void *in, void *out, size_t len, uint64_t deadline)
{
	return exchange(b, EB_WIRE_GATHER, in, len, out, len * (size_t)b->size, deadline,
			"allgather");
}

int eb_wire_alltoall(struct eb_boot *b, const void *in, void *out, size_t blk, uint64_t deadline)
{
	return exchange(b, EB_WIRE_ALLTOALL, in, blk * (size_t)b->size, out, blk * (size_t)b->size,
			deadline, "alltoall");
}

int eb_wire_check(struct eb_boot *b)
{
	struct eb_wire_rank *w = b->impl;
	struct pollfd p = {.fd = w->fd, .events = POLLIN};
	struct eb_wire_hdr h;
	int rc;

	if (w->lost)
		return EB_EPEER;
	if (poll(&p, 1, 0) <= 0)
		return EB_OK;
	/* Between collectives the hub only ever speaks to say a rank was lost, or to answer a
	 * question a collective asked. */
	rc = eb_sock_read(w->fd, &h, sizeof(h), eb_deadline(1.0));
	if (rc == EB_OK && h.type == EB_WIRE_PONG && h.len == 0)
		return EB_OK;
	if (rc == EB_OK && h.type == EB_WIRE_PING && h.len == 0) /* the hub asks: we are here */
		return eb_wire_send(w->fd, EB_WIRE_PONG, 0, NULL, 0, eb_deadline(1.0));
	if (rc == EB_OK && h.type == EB_WIRE_ABORT)
		return report_abort(w, &h);
	if (rc != EB_OK) {
		eb_err("lost %s (bootstrap connection closed during a liveness check)",
		       w->hub_name ? w->hub_name : "the launcher");
		w->lost = 1;
		return EB_EPEER;
	}
	eb_err("unexpected bootstrap frame (type %u) outside a collective", h.type);
	w->lost = 1;
	return EB_EPROTO;
}

void eb_wire_finalize(struct eb_boot *b, int exit_code)
{
	struct eb_wire_rank *w = b->impl;

	if (!w->lost)
		(void)eb_wire_send(w->fd, EB_WIRE_FINI, exit_code, NULL, 0, eb_deadline(1.0));
}

const struct eb_boot_ops eb_wire_boot_ops = {
    .name = "local",
    .allgather = eb_wire_allgather,
    .alltoall = eb_wire_alltoall,
    .check = eb_wire_check,
    .finalize = eb_wire_finalize,
};
