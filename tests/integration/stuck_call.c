/* stuck_call: the watching thread ends a rank that stays inside one provider call past its
 * deadline. Two ranks on shm with a 1 s deadline; rank 1 marks itself inside a call of its
 * engine (as fi_cq_read spinning on a stopped peer's lock would be) and sleeps. The launcher's
 * exit status and stderr are judged by stuck_call.sh: rank 1 must say so and end within the
 * deadline plus 2 s; rank 0, waiting in a barrier, is told it lost rank 1. */
#include "efabench/boot.h"
#include "efabench/engine.h"
#include "efabench/status.h"

#include <unistd.h>

#define TIMEOUT_S 1.0

static int rank_main(struct eb_boot *b, void *arg)
{
	struct eb_fabric_opts fo = {.provider = "shm", .timeout_s = TIMEOUT_S};
	struct eb_engine e;
	int rc;

	(void)arg;
	if (eb_engine_open(&e, b, &fo) != EB_OK)
		return 1;
	if (b->rank == 1) {
		eb_prov_enter(&e, "a call that never returns");
		sleep(30);
		return 3; /* not reached: the watch ends the rank first */
	}
	rc = eb_boot_barrier(b, eb_boot_deadline(10 * TIMEOUT_S));
	eb_engine_close(&e);
	return rc == EB_OK ? 4 : 0; /* the barrier must fail: rank 1 is gone */
}

int main(void)
{
	return eb_launch_local(2, rank_main, NULL, TIMEOUT_S + 5);
}
