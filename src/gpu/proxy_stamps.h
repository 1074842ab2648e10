/* The proxy thread's side of sampled puts (eb_put_stamp): the ring producers and the thread
 * stamp, each sampled put's tag (its sample index to the target and its chunk count, carried
 * in the immediate data of its chunks), and on the target the arrivals the tags tell of. */
#ifndef EB_GPU_PROXY_STAMPS_H
#define EB_GPU_PROXY_STAMPS_H

#include "efabench/mem.h"
#include "efabench/proxy_dev.h"
#include "efabench/proxy_thread.h"

#include <stddef.h>
#include <stdint.h>

#define EB_STAMP_TAG	0x8000u /* the tag of a sampled put's chunks */
#define EB_STAMP_WRAP	128u	/* sample indexes the tag carries (7 bits) */
#define EB_STAMP_CHUNKS 255u	/* chunk counts it carries; more: not followed */

struct eb_pstamps {
	struct eb_mem mem; /* the ring: mapped for GPU producers */
	struct eb_put_stamp *ring;
	uint32_t every, n;
	int ranks;
	uint32_t *sampled; /* [ranks] puts sampled to each so far */
	uint16_t *count;   /* [ranks][EB_STAMP_WRAP] chunks of a sampled put counted here */
	int64_t *last;	   /* [ranks] the latest sample index that arrived, -1 */
	struct eb_arrival *arr;
	size_t narr, cap;
	int lost; /* an arrival that found no memory */
};

/* every 0: nothing stamped, nothing allocated. EB_OK or a status after one line. */
int eb_pstamps_open(struct eb_pstamps *s, int gpu, uint32_t every, uint32_t n, int ranks);
void eb_pstamps_close(struct eb_pstamps *s);
/* The producers' pointer to the ring. */
struct eb_put_stamp *eb_pstamps_dev(const struct eb_pstamps *s);
/* A sampled put of nchunks to peer starts: its sample index, and the tag its chunks carry. */
uint32_t eb_pstamps_tag(struct eb_pstamps *s, struct eb_put_stamp *st, int peer, size_t nchunks);
/* A tagged chunk from src arrived (the engine's on_write, in the thread that progresses). */
void eb_pstamps_chunk(struct eb_pstamps *s, int src, uint32_t tag);
void eb_pstamps_clear(struct eb_pstamps *s);

#endif
