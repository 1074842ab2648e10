#include "hub.h"
#include "wire.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A frame that has started arriving completes quickly unless its sender died or stopped
 * mid-way; the hub never waits for it (it reads what has come), but gives up on it after this. */
#define FRAME_SECONDS 10.0
/* How long an absent rank gets to answer the hub's question. */
#define ANSWER_NS 2000000000ull

int eb_hub_init(struct eb_hub *h, int n, const int *fds)
{
	int i;

	h->n = n;
	h->aborted = 0;
	/* Set by callers after init, if at all (the rendezvous never does): never garbage. */
	h->why_closed = NULL;
	h->owner = NULL;
	h->ask_ns = 0;
	h->pending_since = 0;
	h->r = calloc((size_t)n, sizeof(*h->r));
	if (h->r == NULL) {
		eb_err("cannot allocate the bootstrap hub for %d ranks", n);
		return EB_ENOMEM;
	}
	for (i = 0; i < n; i++)
		h->r[i].fd = fds[i];
	return EB_OK;
}

void eb_hub_fini(struct eb_hub *h)
{
	int i;

	for (i = 0; i < h->n; i++) {
		free(h->r[i].data);
		free(h->r[i].in);
		if (h->r[i].fd >= 0)
			close(h->r[i].fd);
	}
	free(h->r);
	h->r = NULL;
}

static void drop(struct eb_hub *h, int i)
{
	free(h->r[i].data);
	free(h->r[i].in);
	h->r[i].data = NULL;
	h->r[i].in = NULL;
	h->r[i].got = 0;
	h->r[i].waiting = 0;
	if (h->r[i].fd >= 0)
		close(h->r[i].fd);
	h->r[i].fd = -1;
}

/* A rank failing inside a collective (timed out, most likely) while others never came to it:
 * those are the stuck ones, and only the hub can tell who they are. */
static void name_absent(const struct eb_hub *h, int failed_waiting)
{
	char who[256] = "";
	size_t used = 0;
	int i, waiting = failed_waiting, absent = 0;

	for (i = 0; i < h->n; i++)
		if (h->r[i].state == EB_HUB_LIVE) {
			waiting += h->r[i].waiting;
			if (!h->r[i].waiting && used < sizeof(who) - 8) {
				used += (size_t)snprintf(who + used, sizeof(who) - used, " %d", i);
				absent++;
			}
		}
	if (waiting > 0 && absent > 0)
		eb_err("bootstrap: rank%s%s never came to the collective the others waited in "
		       "(stopped or stuck?)",
		       absent == 1 ? "" : "s", who);
}

static void abort_all(struct eb_hub *h, int lost, const char *reason)
{
	int i;

	h->aborted = 1;
	for (i = 0; i < h->n; i++) {
		if (h->r[i].state != EB_HUB_LIVE || i == lost)
			continue;
		/* Best effort: a rank that cannot take the news is on its way out anyway. */
		(void)eb_wire_send(h->r[i].fd, EB_WIRE_ABORT, lost, reason, strlen(reason) + 1,
				   eb_deadline(1.0));
	}
}

void eb_hub_lose(struct eb_hub *h, int i, const char *reason)
{
	if (h->r[i].state == EB_HUB_LOST)
		return;
	h->r[i].state = EB_HUB_LOST;
	drop(h, i);
	if (!h->aborted)
		abort_all(h, i, reason);
}

static int send_result(struct eb_hub *h, int i, const void *data, uint64_t len)
{
	int rc = eb_wire_send(h->r[i].fd, EB_WIRE_RESULT, h->r[i].seq, data, len,
			      eb_deadline(FRAME_SECONDS));

	if (rc != EB_OK)
		eb_hub_lose(h, i, "stopped reading its bootstrap connection");
	return rc;
}

/* Every rank has contributed: check they agree, then answer each. */
static void complete(struct eb_hub *h)
{
	struct eb_hub_rank *r0 = &h->r[0];
	uint64_t blk = r0->type == EB_WIRE_ALLTOALL ? r0->len / (uint64_t)h->n : r0->len;
	unsigned char *out;
	int i, j;

	for (i = 1; i < h->n; i++) {
		if (h->r[i].type != r0->type || h->r[i].seq != r0->seq || h->r[i].len != r0->len) {
			char why[160];

			snprintf(why, sizeof(why),
				 "ranks 0 and %d called different collectives (type %u/%u, "
				 "%llu/%llu bytes)",
				 i, r0->type, h->r[i].type, (unsigned long long)r0->len,
				 (unsigned long long)h->r[i].len);
			eb_err("%s", why);
			abort_all(h, -1, why);
			return;
		}
	}
	out = malloc(blk * (uint64_t)h->n + 1);
	if (out == NULL) {
		abort_all(h, -1, "the launcher ran out of memory");
		return;
	}
	for (i = 0; i < h->n && !h->aborted; i++) {
		for (j = 0; j < h->n; j++) {
			const unsigned char *src = h->r[j].data;

			if (r0->type == EB_WIRE_ALLTOALL)
				src += (uint64_t)i * blk;
			else if (i > 0)
				continue; /* allgather: one result serves everybody */
			memcpy(out + (uint64_t)j * blk, src, blk);
		}
		send_result(h, i, out, blk * (uint64_t)h->n);
	}
	free(out);
	for (i = 0; i < h->n; i++) {
		free(h->r[i].data);
		h->r[i].data = NULL;
		h->r[i].waiting = 0;
	}
}

/* The frame in r->hdr and r->in has arrived whole: act on it. */
static void frame_done(struct eb_hub *h, int i)
{
	struct eb_hub_rank *r = &h->r[i];

	r->got = 0;
	if (r->hdr.type == EB_WIRE_FINI) {
		int was_waiting = r->waiting;

		r->state = EB_HUB_DONE;
		r->exit_code = r->hdr.arg;
		drop(h, i);
		if (r->exit_code != 0 && !h->aborted) {
			char why[64];

			name_absent(h, was_waiting);
			snprintf(why, sizeof(why), "it failed (exit code %d)", r->exit_code);
			abort_all(h, i, why);
		}
		return;
	}
	if (r->hdr.type == EB_WIRE_PING) {
		(void)eb_wire_send(r->fd, EB_WIRE_PONG, 0, NULL, 0, eb_deadline(1.0));
		return;
	}
	if (r->hdr.type == EB_WIRE_PONG) { /* the answer to our question */
		r->asked_ns = 0;
		r->next_ask_ns = eb_now_ns() + h->ask_ns;
		return;
	}
	r->data = r->in;
	r->in = NULL;
	r->type = r->hdr.type;
	r->seq = r->hdr.arg;
	r->len = r->hdr.len;
	r->waiting = 1;
	r->asked_ns = 0; /* coming is answer enough */
}

/* A whole header: is it a frame a rank may send now? Room for its payload. */
static int header_ok(struct eb_hub *h, int i)
{
	struct eb_hub_rank *r = &h->r[i];
	uint32_t t = r->hdr.type;

	if (t == EB_WIRE_FINI || t == EB_WIRE_PING || t == EB_WIRE_PONG) {
		if (r->hdr.len == 0)
			return 1;
	} else if ((t == EB_WIRE_GATHER || t == EB_WIRE_ALLTOALL) && !r->waiting &&
		   r->hdr.len <= (1ull << 30)) {
		r->in = malloc(r->hdr.len + 1);
		if (r->in != NULL)
			return 1;
		eb_hub_lose(h, i, "sent more than the launcher could hold");
		return 0;
	}
	eb_hub_lose(h, i, "broke the bootstrap protocol");
	return 0;
}

/* Read what rank i has sent, never waiting for more: a rank stopped half-way through a frame
 * must not keep the hub from serving and answering the others. */
static void read_frames(struct eb_hub *h, int i)
{
	struct eb_hub_rank *r = &h->r[i];
	const uint64_t hl = sizeof(r->hdr);

	while (r->state == EB_HUB_LIVE) {
		unsigned char *to =
		    r->got < hl ? (unsigned char *)&r->hdr + r->got : r->in + (r->got - hl);
		uint64_t want = r->got < hl ? hl - r->got : r->hdr.len - (r->got - hl);
		ssize_t n = recv(r->fd, to, (size_t)want, MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			char why[128];

			snprintf(why, sizeof(why), "%s",
				 r->got > 0 ? "died while sending a bootstrap message"
					    : "closed its bootstrap connection");
			if (h->why_closed != NULL) /* how it went, where the launcher knows */
				h->why_closed(h, i, why, sizeof(why));
			eb_hub_lose(h, i, why);
			return;
		}
		if (r->got == 0)
			r->frame_ns = eb_now_ns();
		r->got += (uint64_t)n;
		if (r->got == hl && !header_ok(h, i))
			return;
		if (r->got == hl + r->hdr.len)
			frame_done(h, i);
	}
}

/* A frame begun and not finished for FRAME_SECONDS: its sender died or stopped mid-way. */
static void lose_stalled(struct eb_hub *h)
{
	uint64_t now = eb_now_ns();
	int i;

	for (i = 0; i < h->n; i++)
		if (h->r[i].state == EB_HUB_LIVE && h->r[i].got > 0 &&
		    now - h->r[i].frame_ns > (uint64_t)(FRAME_SECONDS * 1e9))
			eb_hub_lose(h, i,
				    "it stopped half-way through a bootstrap message (stopped or "
				    "hung)");
}

/* Some ranks wait in a collective: after ask_ns, ask the absent ones whether they are there
 * (they answer from their waits and liveness checks); one silent for ANSWER_NS is stopped or
 * hung, and keeping the others until their deadline would only hide which rank it is. */
static void ask_absent(struct eb_hub *h)
{
	uint64_t now = eb_now_ns();
	int i;

	if (h->pending_since == 0)
		h->pending_since = now;
	if (h->ask_ns == 0 || now - h->pending_since < h->ask_ns)
		return;
	for (i = 0; i < h->n && !h->aborted; i++) {
		struct eb_hub_rank *r = &h->r[i];

		if (r->state != EB_HUB_LIVE || r->waiting)
			continue;
		if (r->asked_ns == 0 && now >= r->next_ask_ns) {
			r->asked_ns = now;
			if (eb_wire_send(r->fd, EB_WIRE_PING, 0, NULL, 0, eb_deadline(1.0)) !=
			    EB_OK)
				eb_hub_lose(h, i, "stopped reading its bootstrap connection");
		} else if (r->asked_ns != 0 && now - r->asked_ns > ANSWER_NS) {
			eb_err("bootstrap: rank %d did not answer within %.0f s while the others "
			       "waited in a collective (stopped or hung)",
			       i, ANSWER_NS * 1e-9);
			eb_hub_lose(h, i,
				    "it did not answer while the others waited in a collective "
				    "(stopped or hung)");
		}
	}
}

int eb_hub_poll(struct eb_hub *h, int timeout_ms)
{
	struct pollfd *p = calloc((size_t)h->n, sizeof(*p));
	int i, live = 0, waiting = 0, done = 0;

	if (p == NULL)
		return 0;
	for (i = 0; i < h->n; i++) {
		p[i].fd = h->r[i].state == EB_HUB_LIVE ? h->r[i].fd : -1;
		p[i].events = POLLIN;
	}
	if (poll(p, (nfds_t)h->n, timeout_ms) > 0) {
		for (i = 0; i < h->n; i++)
			if (p[i].fd >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				read_frames(h, i);
	}
	free(p);
	lose_stalled(h);
	for (i = 0; i < h->n; i++) {
		live += h->r[i].state == EB_HUB_LIVE;
		waiting += h->r[i].state == EB_HUB_LIVE && h->r[i].waiting;
		done += h->r[i].state == EB_HUB_DONE;
	}
	if (h->aborted || waiting == 0) {
		h->pending_since = 0;
		return live;
	}
	if (waiting == h->n) {
		complete(h);
		h->pending_since = 0;
	} else if (done > 0) {
		/* A rank that left can never join the collective the others wait in. */
		for (i = 0; i < h->n; i++) {
			if (h->r[i].state == EB_HUB_DONE) {
				char why[96];

				snprintf(why, sizeof(why),
					 "it left (exit code %d) while others "
					 "waited in a collective",
					 h->r[i].exit_code);
				abort_all(h, i, why);
				break;
			}
		}
	} else {
		ask_absent(h);
	}
	return live;
}
