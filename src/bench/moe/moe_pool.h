/* CPU producers of efabench moe: threads that wait for an op, run their share of it
 * (eb_moe_produce) and report. Kept across iterations, since starting threads per dispatch
 * would cost more than a decode dispatch takes. */
#ifndef EB_BENCH_MOE_POOL_H
#define EB_BENCH_MOE_POOL_H

struct eb_moe_work;
struct eb_moe_pool;

/* n threads running w's ops; EB_OK or a negative status after one line. */
int eb_moe_pool_start(struct eb_moe_pool **pp, int n, const struct eb_moe_work *w);
/* Every thread runs the op w describes now. */
void eb_moe_pool_go(struct eb_moe_pool *p);
/* 1 when every thread finished the last op (*failed set if one failed), else 0. */
int eb_moe_pool_done(struct eb_moe_pool *p, int *failed);
/* End the threads (after the last op is done, or the queues were aborted). */
void eb_moe_pool_stop(struct eb_moe_pool *p);

#endif
