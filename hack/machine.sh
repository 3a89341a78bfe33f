#!/usr/bin/env bash
# machine.sh prints what the machine has free before a test run (disk where
# the checkout is, memory, load) and fails, saying so, when less than
# MIN_FREE_GIB (default 10) GiB of disk is free: the tools, the build cache
# and the layers' clusters need it, and a full disk fails tests far from
# the cause.
set -euo pipefail
cd "$(dirname "$0")/.."
min="${MIN_FREE_GIB:-10}"
free_kib=$(df -Pk . | awk 'NR==2 {print $4}')
free_gib=$((free_kib / 1024 / 1024))
mem=$(awk '/^MemAvailable:/ {printf "%.1f", $2/1024/1024}' /proc/meminfo)
echo "machine: $(nproc) cores; disk ${free_gib} GiB free at $(pwd); memory ${mem} GiB available; load $(cut -d' ' -f1-3 /proc/loadavg)"
if ((free_gib < min)); then
	echo "machine: FAIL: ${free_gib} GiB of disk free where the checkout is, less than the ${min} GiB a test run needs; free some (go clean -cache, old kwok clusters in ~/.kwok) and run again" >&2
	exit 1
fi
