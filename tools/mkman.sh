#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/mkman.sh ASCBPF VERSION > ascbpf.8
#
# Builds the man page from the program's own help texts (`ascbpf --help` and
# `ascbpf CMD --help` for every command), so the page, the README's usage
# section (checked by tests/repo/test_docs.sh) and --help cannot drift.
set -eu
bin=$1
version=$2

roff_escape() {
	# backslashes first, then leading dots/quotes that roff would take as requests
	sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\\&'/" -e 's/-/\\-/g'
}

cat <<EOT
.TH ASCBPF 8 "" "ascbpf $version" "System Administration"
.SH NAME
ascbpf \- eBPF tracing for PyTorch on Ascend NPUs, written as torch_npu.profiler output
.SH SYNOPSIS
.B ascbpf
.I COMMAND
.RI [ OPTIONS ]
.SH DESCRIPTION
ascbpf attaches uprobes to the CANN and torch_npu runtime libraries and tracepoints to the
driver's ioctls of a process that is already running (or that it starts), captures operator
launches, memory allocations and NPU task submissions, and converts the capture into the
*_ascend_pt/ASCEND_PROFILER_OUTPUT directory that torch_npu.profiler writes, which the
TensorBoard plugin, MindStudio Insight and msprof-analyze open.
.SH COMMANDS
.nf
EOT
"$bin" --help | roff_escape
echo ".fi"
for cmd in $("$bin" --help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}'); do
	echo ".SH \"ASCBPF $(echo "$cmd" | tr a-z A-Z)\""
	echo ".nf"
	"$bin" "$cmd" --help 2>&1 | roff_escape
	echo ".fi"
done
cat <<'EOT'
.SH EXIT STATUS
0 on success; 2 for a usage or environment error (not root, no such process, no Ascend
libraries in the target, output directory not empty without \-\-force, unknown capture
version); 1 for a failure while tracing or converting (for example a damaged capture, which is
still converted up to its last good frame).
.SH FILES
.TP
.I ./result/{worker}_{pid}_{YYYYmmddHHMMSSmmm}_ascend_pt/
the output, one directory per recorded schedule cycle
.SH SEE ALSO
.BR bpftrace (8),
.BR perf (1)
EOT
