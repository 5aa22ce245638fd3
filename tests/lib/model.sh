# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tests/lib/model.sh - start and stop a private npu-modeld for one test.
#
#   . "$ASCBPF_TOP/tests/lib/model.sh"
#   model_start [--cards N] [--journal DIR] [--card SPEC] [--hbm-mib N] [npu-modeld options]
#   ... run clients: NPU_MODEL_DEV_DIR is exported, so the libraries find the daemon ...
#   model_stop                     (also run by the EXIT trap model_start installs)
#
# model_start makes a directory under mktemp -d (MODEL_TMP), mounts the
# daemon's nodes at $MODEL_TMP/dev (MODEL_MNT), exports NPU_MODEL_DEV_DIR
# and waits until the nodes answer.  It installs `trap model_stop EXIT`
# unless MODEL_NO_TRAP=1 (then call model_stop from your own trap).
# Variables after start: MODEL_TMP, MODEL_MNT, MODEL_PID, MODEL_LOG (daemon
# stderr), MODEL_BIN (bin/ with npu-modeld, npu_halclient, npu_train),
# MODEL_JOURNAL (the --journal DIR if one was given, else empty).
# model_info KEY prints one value of npu_model_info (e.g. dev0.hbm_used).
# Returns non-zero, with the daemon's log on stderr, if it does not start.
# The daemon is a background job of the calling shell: wait for your own
# jobs by PID (a bare `wait` would wait for the daemon too).

MODEL_TOP=${ASCBPF_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
MODEL_BIN=${OUTPUT:-$MODEL_TOP/build}/npu_model/bin
MODEL_TMP="" MODEL_MNT="" MODEL_PID="" MODEL_LOG="" MODEL_JOURNAL=""

model_start() {
	local a prev=""
	for a in "$@"; do
		[ "$prev" = --journal ] && MODEL_JOURNAL=$a
		prev=$a
	done
	if [ ! -x "$MODEL_BIN/npu-modeld" ]; then
		echo "model_start: $MODEL_BIN/npu-modeld is not built (run make)" >&2
		return 1
	fi
	MODEL_TMP=$(mktemp -d /tmp/npu_model.XXXXXX) || return 1
	MODEL_MNT=$MODEL_TMP/dev
	MODEL_LOG=$MODEL_TMP/modeld.log
	[ "${MODEL_NO_TRAP:-0}" = 1 ] || trap model_stop EXIT
	"$MODEL_BIN/npu-modeld" --mount "$MODEL_MNT" "$@" >"$MODEL_LOG" 2>&1 &
	MODEL_PID=$!
	export NPU_MODEL_DEV_DIR=$MODEL_MNT
	local i
	for i in $(seq 1 200); do
		if [ -r "$MODEL_MNT/npu_model_info" ] && grep -q '^cards=' "$MODEL_MNT/npu_model_info" 2>/dev/null; then
			return 0
		fi
		if ! kill -0 "$MODEL_PID" 2>/dev/null; then
			echo "model_start: npu-modeld exited:" >&2
			cat "$MODEL_LOG" >&2
			MODEL_PID=""
			return 1
		fi
		sleep 0.05
	done
	echo "model_start: npu-modeld did not come up in 10 s:" >&2
	cat "$MODEL_LOG" >&2
	return 1
}

model_info() {
	sed -n "s/^$1=//p" "$MODEL_MNT/npu_model_info"
}

# Nonzero while the daemon runs.
model_alive() {
	[ -n "$MODEL_PID" ] && kill -0 "$MODEL_PID" 2>/dev/null
}

model_stop() {
	local i
	if [ -n "$MODEL_PID" ]; then
		kill -TERM "$MODEL_PID" 2>/dev/null
		for i in $(seq 1 100); do
			kill -0 "$MODEL_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill -KILL "$MODEL_PID" 2>/dev/null
		wait "$MODEL_PID" 2>/dev/null
		MODEL_PID=""
	fi
	if [ -n "$MODEL_MNT" ] && grep -qs " $MODEL_MNT " /proc/mounts; then
		fusermount3 -u -z "$MODEL_MNT" 2>/dev/null || umount -l "$MODEL_MNT" 2>/dev/null
	fi
	if [ -n "$MODEL_TMP" ] && [ -d "$MODEL_TMP" ]; then
		rmdir "$MODEL_MNT" 2>/dev/null
		rm -rf "$MODEL_TMP"
	fi
	MODEL_TMP="" MODEL_MNT=""
	return 0
}
