/* efabench sendrecv: ping-pong of S bytes between rank 0 and rank k over fi_send/fi_recv, each
 * receive posted while the peer's message is still to come. Each timed iteration is one round
 * trip; t is half of it (one-way), so Gbps counts S bytes per one-way trip. */
#include "harness/sweep.h"
#include "efabench/pattern.h"
#include "efabench/status.h"
#include "efabench/xfer.h"

#include "efabench/size.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

struct sendrecv_state {
	struct eb_payload out, in;
	struct eb_xfer tx, rx;
	size_t chunk;
	int rx_armed;
	int pipeline; /* unstaged, without --check: rank 0 may post its next message early */
	int ahead;    /* rank 0's next message is posted already */
	int inject;   /* the message goes by fi_inject: no send completion to wait for */
};

/* A message larger than one send carries goes as several only where sends land in order
 * (FI_ORDER_SAS): efa-direct sends at most the MTU (~8.9 KB) and orders nothing. */
static int sendrecv_fits(const struct eb_opts *o, const struct eb_limits *lim,
			 const struct eb_nic *nic, int say)
{
	uint64_t max = o->sizes[o->nsizes - 1];
	char big[24];

	if (lim->sas || max <= lim->max_msg)
		return EB_OK;
	if (say)
		eb_err("provider %s (fabric %s) sends at most %zu bytes per message and keeps no "
		       "order between sends (no FI_ORDER_SAS), so a message cannot go as several: "
		       "-e %s is refused (-e %zu is the most%s)",
		       nic->prov, nic->fabric, lim->max_msg, eb_size_format(max, big, sizeof(big)),
		       lim->max_msg,
		       strcmp(nic->prov, "efa") == 0 ? "; the efa fabric sends any size" : "");
	return EB_EINVAL;
}

static int sendrecv_setup(struct eb_ctx *c)
{
	struct eb_engine *e = c->e;
	size_t max = (size_t)c->o->sizes[c->o->nsizes - 1];
	struct sendrecv_state *st = c->priv;
	int rc;

	/* Chunks of one message land in order only where sends are ordered (FI_ORDER_SAS);
	 * elsewhere each message goes as one operation (sendrecv_fits). */
	st->chunk = e->lim.sas ? c->chunk : max;
	if (st->chunk > e->lim.max_msg)
		st->chunk = e->lim.max_msg;
	rc = eb_payload_alloc(c, &st->out, max, "the send buffer");
	if (rc == EB_OK)
		rc = eb_payload_alloc(c, &st->in, max, "the receive buffer");
	if (rc == EB_OK)
		rc = eb_payload_reg_one(c, &st->out, 0, EB_USE_SEND);
	if (rc == EB_OK)
		rc = eb_payload_reg_one(c, &st->in, 0, EB_USE_RECV);
	if (rc == EB_OK)
		rc = eb_xfer_init(&st->tx, e, c->window);
	if (rc == EB_OK)
		rc = eb_xfer_init(&st->rx, e, c->window);
	return rc;
}

static void sendrecv_teardown(struct eb_ctx *c)
{
	struct sendrecv_state *st = c->priv;

	eb_xfer_fini(&st->tx);
	eb_xfer_fini(&st->rx);
	eb_payload_free(&st->out);
	eb_payload_free(&st->in);
}

/* Post the receive of the peer's next message (as much of it as the window allows; a message
 * of one operation goes straight to the engine). */
static int arm_rx(struct eb_ctx *c, struct sendrecv_state *st)
{
	int rc;

	if (st->rx_armed)
		return EB_OK;
	st->rx_armed = 1;
	eb_xfer_recv(&st->rx, 0, c->peer, eb_payload_at(&st->in, 0), c->bytes, st->chunk,
		     eb_region_desc(&st->in.reg, 0));
	rc = eb_payload_stage(c, &st->in, &st->rx, 1);
	return rc == EB_OK ? eb_xfer_step(&st->rx) : rc;
}

/* This rank's message (staged: copied from the GPU as it goes), posted as far as the window
 * allows: a message of one operation goes out at once. */
static int arm_tx(struct eb_ctx *c, struct sendrecv_state *st)
{
	int rc;

	if (st->inject)
		return eb_xfer_inject_send(c->e, 0, c->peer, eb_payload_at(&st->out, 0), c->bytes);
	eb_xfer_send(&st->tx, 0, c->peer, eb_payload_at(&st->out, 0), c->bytes, st->chunk,
		     eb_region_desc(&st->out.reg, 0));
	rc = eb_payload_stage(c, &st->out, &st->tx, 1);
	return rc == EB_OK ? eb_xfer_step(&st->tx) : rc;
}

/* Messages of at most the provider's inject size from memory the CPU reads go by fi_inject,
 * as fi_rdm_pingpong and osu_latency send them. */
static int uses_inject(const struct eb_ctx *c, const struct sendrecv_state *st, size_t bytes)
{
	return !st->out.staged && c->mem != EB_MEM_DEVICE && bytes <= st->chunk &&
	       bytes <= c->e->lim.inject_msg;
}

static int sendrecv_prepare(struct eb_ctx *c)
{
	struct sendrecv_state *st = c->priv;
	struct eb_pattern out = {
	    .src = (uint32_t)c->rank, .dst = (uint32_t)c->peer, .epoch = c->epoch};
	struct eb_pattern in = {
	    .src = (uint32_t)c->peer, .dst = (uint32_t)c->rank, .epoch = EB_EPOCH_POISON};

	int rc;

	if (c->role == EB_ROLE_IDLE)
		return EB_OK;
	rc = eb_payload_fill(c, &st->out, 0, c->bytes, &out);
	if (rc == EB_OK)
		rc = eb_payload_fill(c, &st->in, 0, c->bytes, &in);
	st->pipeline = !st->out.staged && !st->in.staged && !c->o->check;
	st->inject = uses_inject(c, st, c->bytes);
	st->ahead = 0;
	/* Posted before the barrier that precedes the first send. */
	return rc == EB_OK ? arm_rx(c, st) : rc;
}

/* Wait for this rank's send (tx), the peer's message (rx) or both; no clock read per message. */
static int wait(struct eb_ctx *c, struct sendrecv_state *st, int tx, int rx)
{
	struct eb_xfer *xs[2] = {&st->tx, &st->rx};
	int first = tx ? 0 : 1, n = tx + rx;

	return eb_xfer_wait(xs + first, n, EB_DEADLINE_LAZY);
}

/* This rank's message, then the receive of the peer's: the reply cannot come sooner than a
 * one-way trip, so the receive is still posted in time (else the provider holds the message as
 * unexpected), and the post stays off the round trip. */
static int send_first(struct eb_ctx *c, struct sendrecv_state *st)
{
	int rc = arm_tx(c, st);

	return rc == EB_OK ? arm_rx(c, st) : rc;
}

static int sendrecv_iter(struct eb_ctx *c, long i)
{
	struct sendrecv_state *st = c->priv;
	int rc;

	if (c->role == EB_ROLE_IDLE)
		return EB_OK;
	if (c->role == EB_ROLE_INIT) {
		rc = st->ahead ? EB_OK : send_first(c, st);
		st->ahead = 0;
		if (rc == EB_OK)
			rc = wait(c, st, !st->inject, 1);
		st->rx_armed = 0;
		/* The next message goes out as soon as the reply is in, before the harness's
		 * timestamp: an iteration then runs from one send to the next, and no clock read
		 * sits between the reply and the next send. Not staged, nor with --check, whose
		 * next iteration prepares and verifies first. */
		if (rc == EB_OK && st->pipeline && i + 1 < c->iters) {
			rc = send_first(c, st);
			st->ahead = rc == EB_OK;
		}
		return rc;
	}
	rc = wait(c, st, 0, 1);
	st->rx_armed = 0;
	if (rc != EB_OK)
		return rc;
	/* Reply, then the next receive (never past the phase, which would leave a receive posted
	 * into the next one). */
	rc = arm_tx(c, st);
	if (rc == EB_OK && i + 1 < c->iters)
		rc = arm_rx(c, st);
	return rc == EB_OK && !st->inject ? wait(c, st, 1, 0) : rc;
}

static int sendrecv_verify(struct eb_ctx *c, uint64_t *wrong)
{
	struct sendrecv_state *st = c->priv;
	struct eb_pattern in = {
	    .src = (uint32_t)c->peer, .dst = (uint32_t)c->rank, .epoch = c->epoch};

	if (c->role != EB_ROLE_IDLE)
		*wrong += eb_payload_check(c, &st->in, 0, c->bytes, &in);
	return EB_OK;
}

static const struct eb_payload *sendrecv_landing(struct eb_ctx *c, size_t *off, size_t *len)
{
	*off = 0;
	*len = c->bytes;
	return &((struct sendrecv_state *)c->priv)->in;
}

/* Whether this size's messages went by fi_inject. */
static void inject_figure(const struct eb_ctx *c, const struct eb_meas *m, struct eb_rec *rec)
{
	eb_rec_bool(rec, "inject", uses_inject(c, c->priv, (size_t)m->pt->size));
}

static void sendrecv_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
			    struct eb_rec *r)
{
	eb_sweep_record_own(c, m, s, r, inject_figure);
}

static const struct eb_sweep_def sendrecv_sweep = {
    .nvariants = 1,
    .variants = {{{"Host", "SingleHost", "SingleDevice", "SingleStaged"},
		  EB_LAYOUT_SINGLE,
		  EB_FLOW_PAIRS}},
    .one_way = 1,
};

static const struct eb_bench sendrecv_bench = {
    .priv_size = sizeof(struct sendrecv_state),
    .metric = "t = half the round trip (one-way); S bytes go each way",
    EB_SWEEP_HOOKS,
    .plan = eb_sweep_plan,
    .sweep = &sendrecv_sweep,
    .facts = eb_sweep_facts,
    .record = sendrecv_record,
    .fits = sendrecv_fits,
    EB_BENCH_HOOKS(sendrecv),
};

const struct eb_cmd eb_cmd_sendrecv = {
    .name = "sendrecv",
    .summary = "two-sided send/recv ping-pong, rank 0 <-> rank k",
    .help = "  fi_send/fi_recv ping-pong rank 0 <-> rank k with pre-posted receives;\n"
	    "  t = HALF the round trip (one-way time); S bytes travel each way and Gbps\n"
	    "  counts S per one-way t; messages of at most the provider's inject size from\n"
	    "  host or pinned memory go by fi_inject (no send completion; JSON: inject), as\n"
	    "  fi_rdm_pingpong sends them",
    .groups = EB_G_FABRIC_BENCH & ~EB_G_LAYOUT,
    .bench = &sendrecv_bench,
    .report = EB_REPORT_DEFAULT,
};
