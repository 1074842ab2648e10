#include "efabench/stage.h"
#include "efabench/status.h"
#include "core/log.h"

#include <stdlib.h>

#ifdef EB_HAVE_CUDA
#include <cuda_runtime_api.h>

struct eb_stage {
	cudaStream_t stream[2]; /* [to_device]: the copy engines work per direction */
	cudaEvent_t *ev;
	int *busy;
	int nslots, next;
};

static int fail(cudaError_t err, const char *what)
{
	eb_err("%s: %s", what, cudaGetErrorString(err));
	return EB_ESYS;
}

void eb_stage_destroy(struct eb_stage *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; s->ev != NULL && i < s->nslots; i++)
		if (s->ev[i] != NULL)
			cudaEventDestroy(s->ev[i]);
	for (i = 0; i < 2; i++)
		if (s->stream[i] != NULL)
			cudaStreamDestroy(s->stream[i]);
	free(s->ev);
	free(s->busy);
	free(s);
}

int eb_stage_create(struct eb_stage **out, int slots)
{
	struct eb_stage *s = calloc(1, sizeof(*s));
	cudaError_t err = cudaSuccess;
	int i;

	if (s == NULL)
		return EB_ENOMEM;
	s->nslots = slots;
	s->ev = calloc((size_t)slots, sizeof(*s->ev));
	s->busy = calloc((size_t)slots, sizeof(*s->busy));
	if (s->ev == NULL || s->busy == NULL) {
		eb_stage_destroy(s);
		return EB_ENOMEM;
	}
	for (i = 0; i < 2 && err == cudaSuccess; i++)
		err = cudaStreamCreateWithFlags(&s->stream[i], cudaStreamNonBlocking);
	for (i = 0; i < slots && err == cudaSuccess; i++)
		err = cudaEventCreateWithFlags(&s->ev[i], cudaEventDisableTiming);
	if (err != cudaSuccess) {
		eb_stage_destroy(s);
		return fail(err, "creating the staging streams and events");
	}
	*out = s;
	return EB_OK;
}

int eb_stage_start(struct eb_stage *s, void *dst, const void *src, size_t n, int to_device,
		   int *ticket)
{
	cudaStream_t st = s->stream[to_device ? 1 : 0];
	cudaError_t err;
	int i, t = 0;

	for (i = 0; i < s->nslots; i++) {
		t = (s->next + i) % s->nslots;
		if (!s->busy[t])
			break;
	}
	if (i == s->nslots)
		return EB_AGAIN;
	err = cudaMemcpyAsync(dst, src, n,
			      to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, st);
	if (err == cudaSuccess)
		err = cudaEventRecord(s->ev[t], st);
	if (err != cudaSuccess)
		return fail(err, "a staging copy");
	s->busy[t] = 1;
	s->next = (t + 1) % s->nslots;
	*ticket = t;
	return EB_OK;
}

int eb_stage_test(struct eb_stage *s, int t)
{
	cudaError_t err = cudaEventQuery(s->ev[t]);

	if (err == cudaErrorNotReady)
		return 0;
	if (err != cudaSuccess)
		return fail(err, "a staging copy");
	s->busy[t] = 0;
	return 1;
}

int eb_stage_drain(struct eb_stage *s)
{
	cudaError_t err = cudaStreamSynchronize(s->stream[0]);
	int i;

	if (err == cudaSuccess)
		err = cudaStreamSynchronize(s->stream[1]);
	for (i = 0; i < s->nslots; i++)
		s->busy[i] = 0;
	return err == cudaSuccess ? EB_OK : fail(err, "draining the staging copies");
}

#else

int eb_stage_create(struct eb_stage **s, int slots)
{
	eb_err("--staged needs a build with CUDA (this one has none)");
	return EB_ENOTSUP;
}

void eb_stage_destroy(struct eb_stage *s)
{
}

int eb_stage_start(struct eb_stage *s, void *dst, const void *src, size_t n, int to_device,
		   int *ticket)
{
	return EB_ENOTSUP;
}

int eb_stage_test(struct eb_stage *s, int ticket)
{
	return EB_ENOTSUP;
}

int eb_stage_drain(struct eb_stage *s)
{
	return EB_ENOTSUP;
}
#endif
