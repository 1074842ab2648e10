/* libFuzzer target: the bootstrap's wire protocol (src/boot), every side that reads what a peer
 * sends. The peer's bytes are written into one end of a socketpair whose writing side is then
 * shut, and the reading code runs on the other end (an early EOF, never a wait).
 *
 * Input: byte 0 picks the side, byte 1 a size, byte 2 (rank side) the calls; the rest is the
 * stream(s).
 *   0  hub (hub.c, the embedded launcher's and the rendezvous' server): 1-4 ranks, the rest
 *      cut at "|RANK|" into each rank's stream of frames (GATHER/ALLTOALL/FINI/...)
 *   1  rank side (wire_rank.c): the stream is what the hub answers; a job of 1-4 ranks makes
 *      up to 4 calls (check, allgather, alltoall, a 0-byte allgather), then finalize
 *   2  rendezvous (rendezvous.c): one incoming connection to rank 0, a job of 1-4 ranks: the
 *      hello (magic, version, rank, size, token "fuzz-token") is admitted or refused, then the
 *      admitted connection's frames go to the hub (the other ranks' connections close at once)
 * Properties: no crash, leak or hang (the hub must have let every rank go within a bounded
 * number of polls). */
#include "boot/rendezvous.c" /* admit(), static there; defines _GNU_SOURCE first */

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RANKS 4
#define SEP	  "|RANK|"
#define SEP_LEN	  6

/* A connected pair: fds[0] is the side under test, fds[1] got the bytes and shut writing. */
static int feed(const uint8_t *bytes, size_t len, int fds[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
		abort();
	/* The stream fits the socket buffer (inputs are small): a plain write does it. */
	if (len > 0 && eb_sock_write(fds[1], bytes, len, eb_deadline(5.0)) != EB_OK)
		abort();
	if (shutdown(fds[1], SHUT_WR) != 0)
		abort();
	return 0;
}

static void drain(struct eb_hub *hub)
{
	int polls = 0;

	while (eb_hub_poll(hub, 0) > 0)
		if (++polls > 100000)
			abort(); /* every stream ends in EOF: the hub must let every rank go */
}

static void hub_side(const uint8_t *data, size_t size)
{
	int n = 1 + data[0] % MAX_RANKS, fds[MAX_RANKS], peer[MAX_RANKS], i, pair[2];
	const uint8_t *p = data + 1, *end = data + size;
	struct eb_hub hub;

	for (i = 0; i < n; i++) {
		const uint8_t *cut = i + 1 < n ? memmem(p, (size_t)(end - p), SEP, SEP_LEN) : NULL;
		const uint8_t *stop = cut != NULL ? cut : end;

		feed(p, (size_t)(stop - p), pair);
		fds[i] = pair[0];
		peer[i] = pair[1];
		p = cut != NULL ? cut + SEP_LEN : end;
	}
	if (eb_hub_init(&hub, n, fds) != EB_OK)
		abort();
	drain(&hub);
	eb_hub_fini(&hub);
	for (i = 0; i < n; i++)
		close(peer[i]);
}

static void rank_side(const uint8_t *data, size_t size)
{
	struct eb_wire_rank w = {.hub_name = "the fuzzer"};
	struct eb_boot b = {.rank = 0, .ops = &eb_wire_boot_ops, .impl = &w};
	unsigned char in[64] = {0}, out[MAX_RANKS * 64];
	int pair[2], i, calls;

	if (size < 2)
		return;
	b.size = 1 + data[0] % MAX_RANKS;
	calls = data[1];
	feed(data + 2, size - 2, pair);
	w.fd = pair[0];
	for (i = 0; i < 4; i++) {
		switch ((calls >> (2 * i)) & 3) {
		case 0:
			(void)eb_wire_check(&b);
			break;
		case 1:
			(void)eb_wire_allgather(&b, in, out, 16, eb_deadline(1.0));
			break;
		case 2:
			(void)eb_wire_alltoall(&b, in, out, 8, eb_deadline(1.0));
			break;
		default:
			(void)eb_wire_allgather(&b, in, out, 0, eb_deadline(1.0));
			break;
		}
	}
	eb_wire_finalize(&b, 0);
	close(pair[0]);
	close(pair[1]);
}

static void rendezvous_side(const uint8_t *data, size_t size)
{
	struct rdv r = {.listen_fd = -1};
	int fds[MAX_RANKS], peer[MAX_RANKS], pair[2], i, rank = -1, n;
	struct eb_hub hub;

	r.o.size = n = 1 + data[0] % MAX_RANKS;
	r.o.token = "fuzz-token";
	for (i = 0; i < n; i++)
		fds[i] = peer[i] = -1;
	feed(data + 1, size - 1, pair);
	if (admit(&r, pair[0], fds, &rank) != EB_OK) {
		close(pair[1]); /* admit closed pair[0] */
		return;
	}
	if (rank < 0 || rank >= n)
		abort();
	fds[rank] = pair[0];
	peer[rank] = pair[1];
	for (i = 0; i < n; i++) {
		if (fds[i] >= 0)
			continue;
		feed(NULL, 0, pair);
		fds[i] = pair[0];
		peer[i] = pair[1];
	}
	if (eb_hub_init(&hub, n, fds) != EB_OK)
		abort();
	drain(&hub);
	eb_hub_fini(&hub);
	for (i = 0; i < n; i++)
		close(peer[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 || size > 65536)
		return -1;
	switch (data[0] % 3) {
	case 0:
		hub_side(data + 1, size - 1);
		break;
	case 1:
		rank_side(data + 1, size - 1);
		break;
	default:
		rendezvous_side(data + 1, size - 1);
		break;
	}
	return 0;
}
