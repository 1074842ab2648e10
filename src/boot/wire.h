/* Frames between a rank and the hub that serves collectives (local launcher, TCP rendezvous).
 * A rank sends GATHER/ALLTOALL with its contribution and reads RESULT; the hub may send ABORT
 * at any time; a rank says FINI (with its exit code) before it leaves; PING gets PONG. */
#ifndef EB_BOOT_WIRE_H
#define EB_BOOT_WIRE_H

#include <stddef.h>
#include <stdint.h>

struct eb_boot;

enum eb_wire_type {
	EB_WIRE_GATHER = 1,
	EB_WIRE_ALLTOALL = 2,
	EB_WIRE_RESULT = 3,
	EB_WIRE_ABORT = 4, /* arg = lost rank (or -1), payload = reason text */
	EB_WIRE_FINI = 5,  /* arg = exit code */
	/* A rank whose collective timed out asks whether the hub is there at all (a stopped
	 * rank 0 serving a rendezvous cannot name anyone); the hub answers even mid-collective. */
	EB_WIRE_PING = 6,
	EB_WIRE_PONG = 7,
};

struct eb_wire_hdr {
	uint32_t type;
	int32_t arg; /* sequence number, rank or exit code, by type */
	uint64_t len;
};

/* Full reads and writes with a deadline. EB_EPEER on EOF or reset, EB_ETIMEDOUT, EB_ESYS. */
int eb_sock_read(int fd, void *buf, size_t len, uint64_t deadline);
int eb_sock_write(int fd, const void *buf, size_t len, uint64_t deadline);
int eb_wire_send(int fd, uint32_t type, int32_t arg, const void *data, uint64_t len,
		 uint64_t deadline);

/* Rank side of a hub connection. */
struct eb_wire_rank {
	int fd;
	int32_t seq;
	int lost;	      /* set once an ABORT arrived */
	const char *hub_name; /* who serves us, for messages: "the launcher", "rank 0" */
	uint64_t ping_ns;     /* > 0: while a collective waits, ask the hub this often whether
			       * it is there (a rank serving a rendezvous can be stopped) */
};

extern const struct eb_boot_ops eb_wire_boot_ops;

/* The rank side's operations, for launchers that build their own ops table. */
int eb_wire_allgather(struct eb_boot *b, const void *in, void *out, size_t len, uint64_t deadline);
int eb_wire_alltoall(struct eb_boot *b, const void *in, void *out, size_t blk, uint64_t deadline);
int eb_wire_check(struct eb_boot *b);
void eb_wire_finalize(struct eb_boot *b, int exit_code);

#endif
