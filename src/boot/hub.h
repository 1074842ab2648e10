/* The hub: serves the collectives of n ranks connected by stream sockets and tells every
 * survivor when one of them is lost. Used by the local launcher (and any launcher that can
 * hand it one connected socket per rank). */
#ifndef EB_BOOT_HUB_H
#define EB_BOOT_HUB_H

#include "wire.h"

#include <stddef.h>
#include <stdint.h>

enum eb_hub_state { EB_HUB_LIVE, EB_HUB_DONE, EB_HUB_LOST };

struct eb_hub_rank {
	int fd;
	enum eb_hub_state state;
	int exit_code; /* from FINI */
	int waiting;   /* has a contribution pending */
	uint32_t type; /* of the pending contribution */
	int32_t seq;
	uint64_t len;
	unsigned char *data;
	uint64_t asked_ns;    /* when the hub asked whether it is there; 0: no question out */
	uint64_t next_ask_ns; /* not asked again before */
	/* The frame arriving, read as its bytes come: header, then payload into `in`. */
	struct eb_wire_hdr hdr;
	uint64_t got;	   /* its bytes so far; 0 between frames */
	unsigned char *in; /* its payload */
	uint64_t frame_ns; /* when its first byte came */
};

struct eb_hub {
	int n;
	int aborted; /* an ABORT went out: no more collectives are served */
	struct eb_hub_rank *r;
	/* Optional: says how rank i went when its connection closed (e.g. its exit status). */
	void (*why_closed)(struct eb_hub *h, int i, char *buf, size_t len);
	void *owner;
	/* Optional (0: never): once some ranks have waited this long in a collective, the absent
	 * ones are asked whether they are there; one silent for ANSWER_S is lost, named. */
	uint64_t ask_ns;
	uint64_t pending_since; /* the first contribution to the pending collective came */
};

int eb_hub_init(struct eb_hub *h, int n, const int *fds);
void eb_hub_fini(struct eb_hub *h);

/* Wait up to timeout_ms for traffic and serve it. Returns the number of ranks still live. */
int eb_hub_poll(struct eb_hub *h, int timeout_ms);

/* Declare rank i lost (reason names how) and tell every live rank. */
void eb_hub_lose(struct eb_hub *h, int i, const char *reason);

#endif
