/* What a variant is made of, decided before it runs: which ones run, the chunk and window, the
 * bytes a measuring rank injects and the NICs it drives. */
#include "sweep.h"

#include <string.h>

double eb_variant_bytes(const struct eb_variant *v, uint64_t size, int nranks)
{
	return (double)size * (v->flow == EB_FLOW_PAIRS ? 1.0 : (double)(nranks - 1));
}

/* Distinct NICs rank 0 drives in the variant: what BusBW is measured against. */
int eb_variant_nics(const struct eb_engine *e, const struct eb_variant *v, int nranks)
{
	int used[64] = {0}, peer, ch, n = 0;
	int last = v->flow == EB_FLOW_PAIRS ? 1 : nranks - 1; /* one pair is typical */
	size_t off, len;

	for (peer = 1; peer <= last; peer++)
		for (ch = 0; ch < e->nchan; ch++)
			if (eb_layout_slice(v->layout, e->nchan, 0, peer, 1u << 20, ch, &off, &len))
				used[e->chan[ch].nic_index % 64] = 1;
	for (ch = 0; ch < 64; ch++)
		n += used[ch];
	return n;
}

void eb_harness_tune(const struct eb_opts *o, const char *prov, size_t *chunk, int *window)
{
	int sock = eb_fabric_is_socket_prov(prov);
	/* shm copies GPU memory by CUDA IPC, one synchronous copy per operation on the target:
	 * per-chunk costs dominate, so device payloads go in 256M pieces (1G write on H100: 1M
	 * chunks 1.0, 16M 5.1-5.3, 64M 8.4-8.5, 256M 9.9, 1G 10.2 Tbps; window made no
	 * difference). */
	int ipc = o->mem == EB_MEM_DEVICE && !o->staged && strncmp(prov, "shm", 3) == 0;

	*chunk = o->chunk != 0 ? (size_t)o->chunk : ipc ? 256u << 20 : sock ? 512u << 10 : 1u << 20;
	*window = eb_fabric_window(prov, o->window);
}

int eb_sweep_select(const struct eb_sweep_def *d, const struct eb_opts *o,
		    const struct eb_variant **vars)
{
	const struct eb_variant *all = d->variants;
	int v, n = 0, nall = d->variants_of != NULL ? d->variants_of(o, &all) : d->nvariants;

	for (v = 0; v < nall; v++)
		if (o->layouts == 0 || (o->layouts & (1u << all[v].layout)))
			vars[n++] = &all[v];
	return n;
}
