/* TCP rendezvous: ranks started by any launcher (ssh, ip netns exec, containers) find each
 * other through rank 0, which serves the hub on EFABENCH_ROOT. Every rank presents the job's
 * token; a wrong or missing one is refused and logged. */
#define _GNU_SOURCE
#include "efabench/boot.h"
#include "efabench/status.h"
#include "hub.h"
#include "wire.h"
#include "core/clock.h"
#include "core/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HELLO_MAGIC   0x45464142u /* "EFAB" */
#define HELLO_VERSION 1

struct hello {
	uint32_t magic, version;
	int32_t rank, size;
	char token[EB_RDV_TOKEN_MAX];
};

struct hello_reply {
	int32_t ok; /* 1, or 0 and reason says why */
	char reason[120];
};

struct rdv {
	struct eb_wire_rank w;
	struct eb_rdv_opts o;
	int listen_fd;
	pthread_t hub;
	int hub_running;
	int hub_status;
	/* Set when rank 0 leaves: the hub serves the others until then, no longer. */
	_Atomic uint64_t leave_by_ns;
};

static int env_int(const char *name, int *out)
{
	const char *v = getenv(name);
	long x;
	char *end;

	if (v == NULL)
		return 0;
	x = strtol(v, &end, 10);
	if (*v == '\0' || *end != '\0' || x < 0 || x > EB_RDV_MAX_RANKS)
		return -1;
	*out = (int)x;
	return 1;
}

int eb_rdv_opts_resolve(struct eb_rdv_opts *o)
{
	const char *colon;
	int r;

	if (o->root == NULL)
		o->root = getenv("EFABENCH_ROOT");
	if (o->token == NULL)
		o->token = getenv("EFABENCH_TOKEN");
	if (o->rank < 0 && (r = env_int("EFABENCH_RANK", &o->rank)) < 0) {
		eb_err("EFABENCH_RANK must be an integer from 0 to %d", EB_RDV_MAX_RANKS);
		return EB_EINVAL;
	}
	if (o->size <= 0 && (r = env_int("EFABENCH_SIZE", &o->size)) < 0) {
		eb_err("EFABENCH_SIZE must be an integer from 1 to %d", EB_RDV_MAX_RANKS);
		return EB_EINVAL;
	}
	colon = o->root ? strrchr(o->root, ':') : NULL;
	if (o->root == NULL || colon == NULL || colon == o->root || atoi(colon + 1) <= 0 ||
	    atoi(colon + 1) > 65535) {
		eb_err("the rendezvous needs EFABENCH_ROOT=host:port (got '%s')",
		       o->root ? o->root : "");
		return EB_EINVAL;
	}
	if (o->size < 1 || o->rank < 0 || o->rank >= o->size) {
		eb_err("the rendezvous needs EFABENCH_RANK in [0, EFABENCH_SIZE) and "
		       "EFABENCH_SIZE >= 1 (got rank %d, size %d)",
		       o->rank, o->size);
		return EB_EINVAL;
	}
	if (o->token == NULL || o->token[0] == '\0' || strlen(o->token) >= EB_RDV_TOKEN_MAX) {
		eb_err("the rendezvous needs EFABENCH_TOKEN: the same secret of 1 to %d "
		       "characters for every rank of the job",
		       EB_RDV_TOKEN_MAX - 1);
		return EB_EINVAL;
	}
	return EB_OK;
}

static int resolve(const char *root, struct sockaddr_storage *sa, socklen_t *len)
{
	char host[256];
	const char *colon = strrchr(root, ':');
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
	size_t n = (size_t)(colon - root);
	int rc;

	if (n >= sizeof(host))
		return EB_EINVAL;
	memcpy(host, root, n);
	host[n] = '\0';
	if (host[0] == '[' && n > 1 && host[n - 1] == ']') { /* [v6]:port */
		memmove(host, host + 1, n - 2);
		host[n - 2] = '\0';
	}
	rc = getaddrinfo(host, colon + 1, &hints, &res);
	if (rc != 0) {
		eb_err("cannot resolve the rendezvous address %s: %s", root, gai_strerror(rc));
		return EB_EINVAL;
	}
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return EB_OK;
}

/* Constant time, so a wrong token teaches nothing about the right one. */
static int same_token(const char *a, const char *b)
{
	unsigned char diff = 0;
	size_t i;

	for (i = 0; i < EB_RDV_TOKEN_MAX; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

static void peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	char host[INET6_ADDRSTRLEN] = "?";
	int port = 0;

	if (getpeername(fd, (struct sockaddr *)&sa, &sl) == 0) {
		if (sa.ss_family == AF_INET) {
			struct sockaddr_in *in = (struct sockaddr_in *)&sa;

			inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
			port = ntohs(in->sin_port);
		} else if (sa.ss_family == AF_INET6) {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;

			inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
			port = ntohs(in6->sin6_port);
		}
	}
	snprintf(buf, len, "%s:%d", host, port);
}

/* Judge a whole hello (got: it arrived in full): answer it; EB_OK and its rank, or refused
 * (logged, answered, closed). */
static int judge(struct rdv *r, int fd, const struct hello *h, int got, const int *fds,
		 int *rank_out)
{
	struct hello_reply rep = {.ok = 0};
	char who[80], token[EB_RDV_TOKEN_MAX] = {0};

	strncpy(token, r->o.token, sizeof(token) - 1);
	peer_name(fd, who, sizeof(who));
	if (!got || h->magic != HELLO_MAGIC) {
		snprintf(rep.reason, sizeof(rep.reason), "not an efabench rendezvous hello");
	} else if (h->version != HELLO_VERSION) {
		snprintf(rep.reason, sizeof(rep.reason), "protocol version %u, want %u", h->version,
			 HELLO_VERSION);
	} else if (!same_token(h->token, token)) {
		snprintf(rep.reason, sizeof(rep.reason), "bad token");
	} else if (h->size != r->o.size) {
		snprintf(rep.reason, sizeof(rep.reason), "job size %d, want %d", h->size,
			 r->o.size);
	} else if (h->rank < 0 || h->rank >= r->o.size || fds[h->rank] >= 0) {
		snprintf(rep.reason, sizeof(rep.reason), "rank %d is out of range or taken",
			 h->rank);
	} else {
		rep.ok = 1;
	}
	(void)eb_sock_write(fd, &rep, sizeof(rep), eb_deadline(2.0));
	if (!rep.ok) {
		eb_err("rendezvous refused a connection from %s: %s", who, rep.reason);
		close(fd);
		return EB_EINVAL;
	}
	*rank_out = h->rank;
	return EB_OK;
}

/* One connection's hello, read whole (up to 5 s), then judged: what the hub does for each
 * pending connection, in one call (tests/fuzz/fuzz_wire.c drives the rendezvous through it). */
__attribute__((unused)) static int admit(struct rdv *r, int fd, const int *fds, int *rank_out)
{
	struct hello h;
	int got = eb_sock_read(fd, &h, sizeof(h), eb_deadline(5.0)) == EB_OK;

	return judge(r, fd, &h, got, fds, rank_out);
}

/* Connections whose hello is still arriving: admitted side by side, so that peers that
 * connect and say nothing (or trickle) cost the honest ranks nothing; each has 5 s. */
#define MAX_PENDING 64

struct pending {
	int fd;
	size_t got;
	uint64_t until;
	struct hello h;
};

/* Read what a pending connection sent; 1 when its hello is complete or it is over (*done set:
 * 1 complete, 0 closed or late), 0 to wait more. */
static int pending_step(struct pending *p, int readable, int *done)
{
	if (readable) {
		ssize_t n =
		    recv(p->fd, (char *)&p->h + p->got, sizeof(p->h) - p->got, MSG_DONTWAIT);

		if (n > 0)
			p->got += (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			*done = 0;
			return 1;
		}
	}
	if (p->got == sizeof(p->h)) {
		*done = 1;
		return 1;
	}
	if (eb_now_ns() > p->until) {
		*done = 0;
		return 1;
	}
	return 0;
}

/* The admission deadline passed: say which ranks are missing, and tell those that came. */
static int not_joined(const struct rdv *r, const int *fds)
{
	static const char why[] = "not every rank joined the rendezvous";
	char missing[256] = "";
	size_t used = 0;
	int i, n = r->o.size;

	for (i = 0; i < n && used < sizeof(missing) - 8; i++)
		if (fds[i] < 0)
			used += (size_t)snprintf(missing + used, sizeof(missing) - used, " %d", i);
	eb_err("rendezvous: ranks%s did not join within %.0f s", missing, r->o.timeout_s);
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			(void)eb_wire_send(fds[i], EB_WIRE_ABORT, -1, why, sizeof(why),
					   eb_deadline(1.0));
	return EB_ETIMEDOUT;
}

/* Admit every rank before the deadline: connections wait in pend (*npend of them) until
 * their hello is judged; fds[rank] gets each admitted rank's. */
static int admit_all(struct rdv *r, int *fds, struct pending *pend, int *npend)
{
	uint64_t deadline = eb_deadline(r->o.timeout_s);
	int n = r->o.size, joined = 0, k, rank, one = 1;

	while (joined < n) {
		struct pollfd p[MAX_PENDING + 1] = {{.fd = r->listen_fd, .events = POLLIN}};
		int fd, done;

		if (eb_now_ns() > deadline)
			return not_joined(r, fds);
		/* While every pending slot is taken, new connections wait in the backlog. */
		p[0].fd = *npend < MAX_PENDING ? r->listen_fd : -1;
		for (k = 0; k < *npend; k++)
			p[k + 1] = (struct pollfd){.fd = pend[k].fd, .events = POLLIN};
		if (poll(p, (nfds_t)*npend + 1, 100) < 0)
			continue;
		for (k = *npend - 1; k >= 0; k--) {
			if (!pending_step(&pend[k], p[k + 1].revents != 0, &done))
				continue;
			if (judge(r, pend[k].fd, &pend[k].h, done, fds, &rank) == EB_OK) {
				fds[rank] = pend[k].fd;
				joined++;
			}
			pend[k] = pend[--*npend];
		}
		if (p[0].fd >= 0 && (p[0].revents & POLLIN) &&
		    (fd = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
			/* Rank 0's side sends small messages too (a barrier's release): none waits
			 * for the ACK of the one before, as the ranks' side does not. */
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			pend[(*npend)++] = (struct pending){.fd = fd, .until = eb_deadline(5.0)};
		}
	}
	for (k = 0; k < *npend; k++) /* everyone is in: the rest came too late */
		judge(r, pend[k].fd, &pend[k].h, 0, fds, &rank);
	*npend = 0;
	return EB_OK;
}

/* Serve every rank's collectives until all leave, or rank 0 finished and the rest do not. */
static void serve(struct rdv *r, struct eb_hub *hub)
{
	int i;

	while (eb_hub_poll(hub, 100) > 0) {
		uint64_t by = atomic_load(&r->leave_by_ns);

		/* After an abort every rank has been told; one that is stopped would only keep
		 * rank 0 until the grace below. */
		if (hub->aborted && by != 0)
			break;
		/* A rank that neither finishes nor dies (stopped, say) must not keep rank 0. */
		if (by != 0 && eb_now_ns() > by) {
			for (i = 0; i < hub->n; i++)
				if (hub->r[i].state == EB_HUB_LIVE)
					eb_err(
					    "rendezvous: rank %d still had not left %.0f s after "
					    "rank 0 finished; giving up on it",
					    i, r->o.timeout_s + 5.0);
			break;
		}
	}
}

/* Rank 0's hub thread: admit every rank before the deadline, then serve until all leave. */
static void *hub_main(void *arg)
{
	struct rdv *r = arg;
	int n = r->o.size, i, npend = 0, *fds = malloc(sizeof(int) * (size_t)n);
	struct pending *pend = calloc(MAX_PENDING, sizeof(*pend));
	struct eb_hub hub;

	r->hub_status = EB_ENOMEM;
	if (fds == NULL || pend == NULL)
		goto free_tables;
	for (i = 0; i < n; i++)
		fds[i] = -1;
	r->hub_status = admit_all(r, fds, pend, &npend);
	if (r->hub_status != EB_OK)
		goto close_fds;
	/* Everyone is here: nobody else may join. */
	close(r->listen_fd);
	r->listen_fd = -1;
	r->hub_status = EB_ENOMEM;
	if (eb_hub_init(&hub, n, fds) != EB_OK)
		goto close_fds;
	hub.ask_ns = (uint64_t)(r->o.timeout_s * 1e9);
	serve(r, &hub);
	eb_hub_fini(&hub);
	r->hub_status = EB_OK;
	goto free_tables;

close_fds:
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (i = 0; i < npend; i++)
		close(pend[i].fd);
free_tables:
	free(pend);
	free(fds);
	return NULL;
}

static int start_hub(struct rdv *r)
{
	struct sockaddr_storage sa;
	socklen_t len;
	int one = 1, rc;

	rc = resolve(r->o.root, &sa, &len);
	if (rc != EB_OK)
		return rc;
	r->listen_fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->listen_fd < 0) {
		eb_err("rendezvous socket: %s", strerror(errno));
		return EB_ESYS;
	}
	setsockopt(r->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(r->listen_fd, (struct sockaddr *)&sa, len) != 0 ||
	    listen(r->listen_fd, 128) != 0) {
		eb_err("rank 0 cannot listen on %s for the rendezvous: %s", r->o.root,
		       strerror(errno));
		close(r->listen_fd);
		return EB_ESYS;
	}
	if (pthread_create(&r->hub, NULL, hub_main, r) != 0) {
		eb_err("cannot start the rendezvous thread");
		close(r->listen_fd);
		return EB_ESYS;
	}
	r->hub_running = 1;
	return EB_OK;
}

/* Connect to the root, retrying while it is not up yet, and present our hello. */
static int join(struct rdv *r)
{
	struct sockaddr_storage sa;
	socklen_t len;
	uint64_t deadline = eb_deadline(r->o.timeout_s);
	struct hello h = {.magic = HELLO_MAGIC, .version = HELLO_VERSION};
	struct hello_reply rep;
	int one = 1, rc, fd = -1;

	rc = resolve(r->o.root, &sa, &len);
	if (rc != EB_OK)
		return rc;
	for (;;) {
		fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			eb_err("rendezvous socket: %s", strerror(errno));
			return EB_ESYS;
		}
		if (connect(fd, (struct sockaddr *)&sa, len) == 0)
			break;
		close(fd);
		if (eb_now_ns() > deadline) {
			eb_err(
			    "cannot reach the rendezvous at %s (rank 0 serves it) within %.0f s: "
			    "%s",
			    r->o.root, r->o.timeout_s, strerror(errno));
			return EB_ETIMEDOUT;
		}
		usleep(100000);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	h.rank = r->o.rank;
	h.size = r->o.size;
	strncpy(h.token, r->o.token, sizeof(h.token) - 1);
	rc = eb_sock_write(fd, &h, sizeof(h), deadline);
	if (rc == EB_OK)
		rc = eb_sock_read(fd, &rep, sizeof(rep), deadline);
	if (rc == EB_ETIMEDOUT) /* the kernel took the connection; nobody read it */
		eb_err("rank 0, which serves the rendezvous at %s, did not answer rank %d within "
		       "%.0f s (stopped or hung)",
		       r->o.root, r->o.rank, r->o.timeout_s);
	else if (rc != EB_OK)
		eb_err("the rendezvous at %s (rank 0) closed rank %d's connection without an "
		       "answer",
		       r->o.root, r->o.rank);
	if (rc == EB_OK && !rep.ok) {
		rep.reason[sizeof(rep.reason) - 1] = '\0';
		eb_err("the rendezvous at %s refused rank %d: %s", r->o.root, r->o.rank,
		       rep.reason);
	}
	if (rc != EB_OK || !rep.ok) {
		close(fd);
		return EB_EPEER;
	}
	r->w.fd = fd;
	r->w.ping_ns = (uint64_t)(r->o.timeout_s * 1e9);
	return EB_OK;
}

static void rdv_finalize(struct eb_boot *b, int exit_code)
{
	struct rdv *r = b->impl;

	eb_wire_finalize(b, exit_code);
	if (r->w.fd >= 0)
		close(r->w.fd);
	/* Rank 0 keeps serving until every rank has left, or the deadline + 5 s. */
	atomic_store(&r->leave_by_ns, eb_deadline(r->o.timeout_s + 5.0));
	if (r->hub_running)
		pthread_join(r->hub, NULL);
	free(r);
	b->impl = NULL;
}

static const struct eb_boot_ops rdv_ops = {
    .name = "tcp-rendezvous",
    .allgather = eb_wire_allgather,
    .alltoall = eb_wire_alltoall,
    .check = eb_wire_check,
    .finalize = rdv_finalize,
};

int eb_boot_rdv_init(struct eb_boot *b, const struct eb_rdv_opts *o)
{
	struct rdv *r = calloc(1, sizeof(*r));
	int rc;

	memset(b, 0, sizeof(*b));
	if (r == NULL)
		return EB_ENOMEM;
	r->o = *o;
	r->w.fd = -1;
	r->w.hub_name = "rank 0 (it serves the rendezvous)";
	r->listen_fd = -1;
	eb_log_set_rank(o->rank);
	if (o->rank == 0) {
		rc = start_hub(r);
		if (rc != EB_OK)
			goto free_rdv;
	}
	rc = join(r);
	if (rc != EB_OK)
		goto stop_hub;
	b->rank = o->rank;
	b->size = o->size;
	b->ops = &rdv_ops;
	b->impl = &r->w; /* the wire functions see their own struct first */
	b->local_rank = 0;
	b->local_size = 1; /* eb_boot_single_host asks the others */
	return EB_OK;

stop_hub:
	if (r->hub_running) {
		/* The hub gives up at its own deadline; never leave it admitting. */
		pthread_join(r->hub, NULL);
	}
free_rdv:
	free(r);
	return rc;
}
