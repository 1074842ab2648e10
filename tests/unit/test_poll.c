/* The wait policy: spin while every busy thread of the ranks on this host has a core of its
 * own, yield when the host is oversubscribed, and whatever the user asked for otherwise. */
#include "check.h"
#include "efabench/fabric.h"

int main(void)
{
	CHECK(eb_poll_decide(EB_POLL_AUTO, 2, 1, 16) == EB_POLL_SPIN);
	CHECK(eb_poll_decide(EB_POLL_AUTO, 16, 1, 16) == EB_POLL_SPIN);
	CHECK(eb_poll_decide(EB_POLL_AUTO, 17, 1, 16) == EB_POLL_YIELD);
	CHECK(eb_poll_decide(EB_POLL_AUTO, 2, 1, 2) == EB_POLL_SPIN);
	CHECK(eb_poll_decide(EB_POLL_AUTO, 4, 1, 2) == EB_POLL_YIELD);
	CHECK(eb_poll_decide(EB_POLL_AUTO, 2, 2, 2) == EB_POLL_YIELD); /* a proxy thread each */
	CHECK(eb_poll_decide(EB_POLL_AUTO, 8, 2, 16) == EB_POLL_SPIN);
	CHECK(eb_poll_decide(EB_POLL_SPIN, 64, 1, 2) == EB_POLL_SPIN);
	CHECK(eb_poll_decide(EB_POLL_YIELD, 1, 1, 128) == EB_POLL_YIELD);
	return check_done();
}
