#!/usr/bin/env bash
# example.sh: examples/put_signal (a kernel puts a buffer with a signal through the CPU proxy,
# the peer's kernel waits for the signal and checks every word), at a large size and one that
# is no multiple of 8 words. Needs a GPU; skipped otherwise.
. "$(dirname "$0")/lib.sh"
PUT_SIGNAL=${PUT_SIGNAL:?set PUT_SIGNAL to the put_signal example}
command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q "^GPU" ||
	skip "no CUDA GPU on this machine"
for bytes in 4194304 1000; do
	timeout 60 "$PUT_SIGNAL" "$bytes" || fail "put_signal $bytes exited $?"
done
echo "PASS"
