/* The fabric layer's choices, on fi_info lists shaped like the ones efa returns (no EFA
 * device here): which fabric a run takes, how --nics names match, what access each use of a
 * buffer registers with. The lists are real libfabric structures (fi_allocinfo), as
 * fi_getinfo hands them back. */
#include "check.h"
#include "efabench/chan.h"
#include "efabench/fabric.h"
#include "efabench/mr.h"
#include "efabench/status.h"
#include "bench/doctor/doctor_efa.h"

#include <rdma/fi_domain.h>
#include <stdlib.h>
#include <string.h>

/* One RDM entry as efa lists it: provider efa, domain <dev>-rdm, fabric efa or efa-direct. */
static struct fi_info *entry(const char *domain, const char *fabric, struct fi_info *next)
{
	struct fi_info *i = fi_allocinfo();

	if (i == NULL)
		abort();
	i->caps = FI_MSG | FI_RMA;
	i->ep_attr->type = FI_EP_RDM;
	i->domain_attr->cq_data_size = 4;
	i->domain_attr->name = strdup(domain);
	i->fabric_attr->name = strdup(fabric);
	i->fabric_attr->prov_name = strdup("efa");
	i->next = next;
	return i;
}

/* libfabric 2.6 on a device with unsolicited write-recv (p5en): for every device efa-direct
 * first, then efa, both under the same domain name. */
static struct fi_info *efa_26(void)
{
	struct fi_info *l = entry("rdmap1s2-rdm", "efa", NULL);

	l = entry("rdmap1s2-rdm", "efa-direct", l);
	l = entry("rdmap0s1-rdm", "efa", l);
	return entry("rdmap0s1-rdm", "efa-direct", l);
}

static int pick(struct fi_info *list, const char *fabric, const char *nics, struct eb_nic **out,
		int *n)
{
	struct eb_fabric_opts o = {.fabric = fabric, .nics = nics, .timeout_s = 5};

	return eb_fabric_pick(list, "efa", &o, 0, out, n);
}

static void fabric_choice(void)
{
	struct fi_info *list = efa_26(), *i;
	struct eb_nic *nics;
	int n, k;

	CHECK(strcmp(eb_fabric_default(list, "efa"), "efa") == 0);
	CHECK(eb_fabric_default(list, "tcp") == NULL);
	/* By default: the efa fabric of each device, though efa-direct comes first. */
	CHECK(pick(list, NULL, NULL, &nics, &n) == EB_OK);
	CHECK(n == 2);
	for (k = 0; k < n; k++)
		CHECK(strcmp(nics[k].fabric, "efa") == 0 &&
		      strcmp(nics[k].info->fabric_attr->name, "efa") == 0);
	CHECK(n == 2 && strcmp(nics[0].domain, "rdmap0s1-rdm") == 0 &&
	      strcmp(nics[1].domain, "rdmap1s2-rdm") == 0);
	eb_fabric_free_nics(nics, n);
	/* --fabric efa-direct: the other entry of the same domains. */
	CHECK(pick(list, "efa-direct", NULL, &nics, &n) == EB_OK);
	CHECK(n == 2);
	for (k = 0; k < n; k++)
		CHECK(strcmp(nics[k].fabric, "efa-direct") == 0);
	eb_fabric_free_nics(nics, n);
	/* efa-direct of 2.1-2.3 lets writes consume posted receives: refused, efa kept. */
	for (i = list; i != NULL; i = i->next)
		i->fabric_attr->prov_version = FI_VERSION(202, 0); /* libfabric 2.2 */
	CHECK(pick(list, "efa-direct", NULL, &nics, &n) == EB_EINVAL);
	CHECK(pick(list, NULL, NULL, &nics, &n) == EB_OK && n == 2);
	eb_fabric_free_nics(nics, n);
	/* A fabric that does not exist is refused, not run on some other. */
	CHECK(pick(list, "efa-indirect", NULL, &nics, &n) == EB_EINVAL);
	CHECK(nics == NULL && n == 0);
	fi_freeinfo(list);
	/* Before 2.1 efa lists one fabric, efa: the same choice. */
	list = entry("rdmap0s1-rdm", "efa", NULL);
	CHECK(pick(list, NULL, NULL, &nics, &n) == EB_OK);
	CHECK(n == 1 && strcmp(nics[0].fabric, "efa") == 0);
	eb_fabric_free_nics(nics, n);
	fi_freeinfo(list);
}

static void nic_names(void)
{
	struct fi_info *list = efa_26();
	struct eb_nic *nics;
	int n;

	/* The device's name, as ibv_devices and the EFA docs write it. */
	CHECK(pick(list, NULL, "rdmap0s1", &nics, &n) == EB_OK);
	CHECK(n == 1 && strcmp(nics[0].domain, "rdmap0s1-rdm") == 0 &&
	      strcmp(nics[0].fabric, "efa") == 0);
	eb_fabric_free_nics(nics, n);
	/* The domain's own name, and both devices. */
	CHECK(pick(list, NULL, "rdmap1s2-rdm,rdmap0s1", &nics, &n) == EB_OK);
	CHECK(n == 2);
	eb_fabric_free_nics(nics, n);
	/* Neither a prefix nor an unknown name matches; one bad item refuses the list. */
	CHECK(pick(list, NULL, "rdmap0", &nics, &n) == EB_EINVAL);
	CHECK(pick(list, NULL, "rdmap0s1,mlx5_0", &nics, &n) == EB_EINVAL);
	CHECK(pick(list, NULL, "rdmap0s1-dgrm", &nics, &n) == EB_EINVAL);
	CHECK(eb_fabric_name_matches("a,rdmap0s1", list) == 1);
	CHECK(eb_fabric_name_matches("rdmap0s1-", list) == 0);
	CHECK(eb_fabric_name_matches("efa-direct", list) == 1); /* a fabric's name */
	fi_freeinfo(list);
	/* Numbers in names in numeric order (p5's rdmap79s0 .. rdmap113s0). */
	list = entry("rdmap113s0-rdm", "efa", entry("rdmap79s0-rdm", "efa", NULL));
	CHECK(pick(list, NULL, NULL, &nics, &n) == EB_OK);
	CHECK(n == 2 && strcmp(nics[0].domain, "rdmap79s0-rdm") == 0);
	eb_fabric_free_nics(nics, n);
	fi_freeinfo(list);
}

static void access_table(void)
{
	/* Targets take local write too (efa's emulated writes read into them); sources take
	 * FI_SEND (efa >= 2.5 gives them the remote read a longread fallback needs). */
	CHECK(eb_mr_access(EB_USE_TARGET) == (FI_REMOTE_WRITE | FI_RECV));
	CHECK(eb_mr_access(EB_USE_SOURCE) == (FI_WRITE | FI_SEND));
	CHECK(eb_mr_access(EB_USE_SEND) == FI_SEND);
	CHECK(eb_mr_access(EB_USE_RECV) == FI_RECV);
	CHECK(eb_mr_access(EB_USE_SOURCE | EB_USE_TARGET) ==
	      (FI_WRITE | FI_SEND | FI_REMOTE_WRITE | FI_RECV));
	CHECK((eb_mr_access(EB_USE_SOURCE | EB_USE_TARGET | EB_USE_SEND | EB_USE_RECV) &
	       FI_REMOTE_READ) == 0); /* no key grants remote reads */
}

static void api_version(void)
{
	const uint32_t v117 = FI_VERSION(1, 17), v118 = FI_VERSION(1, 18), v119 = FI_VERSION(1, 19),
		       v120 = FI_VERSION(1, 20), v122 = FI_VERSION(1, 22), v26 = FI_VERSION(2, 6);

	CHECK(eb_fabric_api_pick(v117, v117) == v117);
	/* 1.17 headers on a 1.18/1.19 runtime: the runtime's (efa's device RDMA default) */
	CHECK(eb_fabric_api_pick(v117, v118) == v118);
	CHECK(eb_fabric_api_pick(v117, v119) == v119);
	CHECK(eb_fabric_api_pick(v117, v26) == v120);
	CHECK(eb_fabric_api_pick(v122, v26) == v122);
	CHECK(eb_fabric_api_pick(v122, v117) == v122); /* never below the headers' */
}

/* An fi_info whose queues hold tx + rx entries. */
static struct fi_info *queues(size_t tx, size_t rx)
{
	struct fi_info *i = fi_allocinfo();

	if (i == NULL)
		abort();
	i->tx_attr->size = tx;
	i->rx_attr->size = rx;
	return i;
}

static void cq_size(void)
{
	struct fi_info *small = queues(256, 256), *efa = queues(4096, 8192);

	/* alltoall, 128 ranks, window 4: ~1,016 completions may be outstanding on a channel,
	 * about the 1,024 of efa-direct 2.1's device CQ; asked for: twice what can be due. */
	CHECK(eb_cq_size(128, 4, small) == 2 * (2 * 128 * 4 + 128));
	CHECK(eb_cq_size(128, 4, small) > 1016 + 128);
	/* never below what the provider's queues hold (efa RDM: tx 4096 + rx 8192) */
	CHECK(eb_cq_size(2, 4, efa) == 4096 + 8192);
	CHECK(eb_cq_size(1024, 64, small) == 2 * (2 * 1024 * 64 + 1024));
	/* bounded: a queue no provider would allocate is not asked for */
	CHECK(eb_cq_size(65535, 65536, small) == (size_t)1 << 22);
	CHECK(eb_cq_size(0, 0, NULL) > 0);
	fi_freeinfo(small);
	fi_freeinfo(efa);
}

static void efa_facts(void)
{
	const struct eb_instance *p5en = eb_instance_of("p5en.48xlarge");
	int maj, min, rev;

	CHECK(p5en != NULL && p5en->nics == 16 && p5en->gbps == 200);
	CHECK(eb_instance_of("p5.48xlarge") != NULL && eb_instance_of("p5.48xlarge")->nics == 32);
	CHECK(eb_instance_of("p6-b200.48xlarge")->gbps == 400);
	CHECK(eb_instance_of("m5.large") == NULL && eb_instance_of("") == NULL);
	/* libfabric's providers encode major * 100 + minor, revision * 10 */
	eb_prov_version(FI_VERSION(118, 10), &maj, &min, &rev);
	CHECK(maj == 1 && min == 18 && rev == 1);
	eb_prov_version(FI_VERSION(206, 0), &maj, &min, &rev);
	CHECK(maj == 2 && min == 6 && rev == 0);
	/* 1.18.0's device write: a fault where the device writes, or may */
	CHECK(eb_efa_known_fault(1, 18, 0, 1) != NULL && eb_efa_known_fault(1, 18, 0, -1) != NULL);
	CHECK(eb_efa_known_fault(1, 18, 0, 0) == NULL && eb_efa_known_fault(1, 18, 1, 1) == NULL);
	CHECK(eb_efa_known_fault(2, 6, 0, 1) == NULL);
}

int main(void)
{
	efa_facts();
	api_version();
	cq_size();
	fabric_choice();
	nic_names();
	access_table();
	return check_done();
}
