#include "efabench/status.h"

const char *eb_strerror(int status)
{
	switch (status) {
	case EB_AGAIN:
		return "try again";
	case EB_OK:
		return "success";
	case EB_EINVAL:
		return "invalid argument";
	case EB_ENOMEM:
		return "out of memory";
	case EB_ETIMEDOUT:
		return "timed out";
	case EB_EPEER:
		return "peer rank lost";
	case EB_EFABRIC:
		return "fabric error";
	case EB_ESYS:
		return "system call failed";
	case EB_EVERIFY:
		return "payload verification failed";
	case EB_ENOTSUP:
		return "not supported";
	case EB_EPROTO:
		return "ranks disagree";
	}
	return "unknown status";
}

int eb_exit_code(int status)
{
	if (status == EB_OK)
		return 0;
	return status == EB_EINVAL ? 2 : 1;
}
