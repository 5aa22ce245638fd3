#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/demo.sh - what `make demo` runs after the build: start the npu_model
# card daemon, start a Python training job (npu_model/workloads/python/train.py
# on Debian's real PyTorch with the model's torch_npu), attach to it by PID
# with `ascbpf trace -p` and the standard options (level 1, shapes, memory,
# stacks, the schedule; a step is a call of the script's train_one_step),
# write ./result/{worker}_{pid}_{timestamp}_ascend_pt/, stop the job and the
# daemon, and say where the output is and how to open it.
#
# Safe to run again and after a failed run: a stale daemon or mount from an
# earlier run is cleaned up first.  Environment: OUTPUT (build dir),
# ASCBPF_DEMO_RESULT (default ./result), ASCBPF_DEMO_SECONDS (longest trace,
# default 20: the schedule's cycle ends it sooner).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
result=${ASCBPF_DEMO_RESULT:-./result}
duration=${ASCBPF_DEMO_SECONDS:-20}
schedule=skip_first=1,wait=1,warmup=1,active=2,repeat=1
state=/run/ascbpf-demo
mnt=$state/dev
modeld=$OUTPUT/npu_model/bin/npu-modeld
train=$top/npu_model/workloads/python/train.py
pypkg=$OUTPUT/npu_model/python
python=/usr/bin/python3	# Debian's python3-torch: the python3 first on PATH may have none

die() { echo "demo: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (eBPF and the FUSE device nodes): sudo make demo"
for f in "$OUTPUT/ascbpf" "$modeld" "$python"; do
	[ -x "$f" ] || die "$f is missing: run make first (and make deps for python3-torch)"
done
[ -f "$pypkg/torch_npu/lib/libtorch_npu.so" ] || die "$pypkg is missing: run make first"

job=
stop_job() {
	if [ -n "$job" ] && kill -0 "$job" 2>/dev/null; then
		kill "$job" 2>/dev/null	# train.py stops at the end of its step
		for _ in $(seq 100); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$job" 2>/dev/null
	fi
	job=
}

stop_daemon() {
	stop_job
	if [ -f "$state/modeld.pid" ]; then
		local pid
		pid=$(cat "$state/modeld.pid")
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null
			for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -9 "$pid" 2>/dev/null
		fi
		rm -f "$state/modeld.pid"
	fi
	if grep -qs " $mnt " /proc/mounts; then
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	fi
}

# A stale daemon or mount from an earlier (failed) run.
stop_daemon
mkdir -p "$mnt" || die "cannot create $mnt"
trap stop_daemon EXIT

"$modeld" --mount "$mnt" >"$state/modeld.log" 2>&1 &
echo $! >"$state/modeld.pid"
for _ in $(seq 100); do
	[ -e "$mnt/davinci_manager" ] && break
	kill -0 "$(cat "$state/modeld.pid")" 2>/dev/null || { cat "$state/modeld.log" >&2; die "npu-modeld did not start"; }
	sleep 0.1
done
[ -e "$mnt/davinci_manager" ] || die "npu-modeld did not create $mnt/davinci_manager (log: $state/modeld.log)"
export NPU_MODEL_DEV_DIR=$mnt

mkdir -p "$result"
before=$(ls -d "$result"/*_ascend_pt 2>/dev/null | sort)
ready=$state/job.ready
rm -f "$ready"
echo "demo: starting the Python job (train.py, baseline) on the simulated NPU"
PYTHONPATH=$pypkg "$python" "$train" --scenario baseline --steps 0 --log-every 10 \
	--wait-ready "$ready" >"$state/job.log" 2>&1 &
job=$!
for _ in $(seq 600); do
	[ -s "$ready" ] && break
	kill -0 "$job" 2>/dev/null || { cat "$state/job.log" >&2; die "train.py exited"; }
	sleep 0.1
done
[ -s "$ready" ] || die "train.py did not start its first step (log: $state/job.log)"
echo "demo: tracing pid $job with schedule $schedule"
"$OUTPUT/ascbpf" trace -p "$job" --level 1 --record-shapes --profile-memory --with-stack \
	--schedule "$schedule" --step-py train_one_step --duration "$duration" -o "$result" --force
rc=$?
stop_job
[ $rc -eq 0 ] || die "ascbpf trace failed (status $rc)"

after=$(ls -d "$result"/*_ascend_pt 2>/dev/null | sort)
new=$(comm -13 <(echo "$before") <(echo "$after") | grep . || true)
[ -n "$new" ] || die "no new *_ascend_pt directory in $result"
echo
echo "demo: output written:"
for d in $new; do
	echo "  $d"
	ls "$d/ASCEND_PROFILER_OUTPUT" | sed 's/^/      /'
done
cat <<EOT

Open it:
  TensorBoard:  pip install torch-tb-profiler-ascend && tensorboard --logdir $result
  MindStudio Insight:  File > Open, choose the *_ascend_pt directory above
  msprof-analyze:  msprof-analyze -d $result
  Plain text:  $OUTPUT/ascbpf report $(echo "$new" | head -n 1)
EOT
