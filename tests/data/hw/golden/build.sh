#!/usr/bin/env bash
# Build every bundle of this directory (nvcc, sm_90a) in parallel and dump
# each binary's SASS to bundleNN.sass (the input of `ptxmc hw compare --sass`).
# Environment: NVCC (default nvcc), JOBS (default: all cores), ARCH (default sm_90a).
set -u
cd "$(dirname "$0")"
export NVCC=${NVCC:-nvcc} ARCH=${ARCH:-sm_90a}
JOBS=${JOBS:-$(nproc)}
ls bundle*.cu | xargs -P "$JOBS" -n 1 bash -c '
  b=${1%.cu}
  if "$NVCC" -O3 -std=c++17 -arch="$ARCH" -o "$b" "$1" -lcuda > "$b.log" 2>&1; then
    cuobjdump -sass "$b" > "$b.sass" && echo "built $b"
  else
    echo "build failed: $b (see $b.log)"; exit 1
  fi' _
