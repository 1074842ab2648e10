/* Status codes shared by every layer: 0 is success, failures are negative. */
#ifndef EFABENCH_STATUS_H
#define EFABENCH_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

enum eb_status {
	EB_AGAIN = 1, /* not a failure: a queue is full; make progress, then try again */
	EB_OK = 0,
	EB_EINVAL = -1,	   /* bad input from the user or caller */
	EB_ENOMEM = -2,	   /* allocation failed */
	EB_ETIMEDOUT = -3, /* a wait passed its deadline */
	EB_EPEER = -4,	   /* a peer rank was lost */
	EB_EFABRIC = -5,   /* a libfabric call or completion failed */
	EB_ESYS = -6,	   /* a system call failed */
	EB_EVERIFY = -7,   /* payload verification found wrong words */
	EB_ENOTSUP = -8,   /* the provider or build cannot do what was asked */
	EB_EPROTO = -9,	   /* ranks disagree (bootstrap protocol, sizes) */
};

const char *eb_strerror(int status);

/* Exit status for a process that ends with this status: 0 ok, 2 bad input, 1 otherwise. */
int eb_exit_code(int status);

#ifdef __cplusplus
}
#endif

#endif
