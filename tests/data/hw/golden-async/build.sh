#!/usr/bin/env bash
# Build every bundle of this directory (nvcc, sm_90) in parallel and dump
# each binary's SASS to bundleNN.sass (the input of `ptxmc hw compare --sass`).
# Relocatable device code (-rdc=true) keeps every litmus thread's role
# function a function of its own in the SASS, so the check can find it
# (whole-program builds fold them into the kernel as unnamed subroutines).
# Environment: NVCC (default nvcc), JOBS (default: all cores), ARCH (default sm_90).
set -u
cd "$(dirname "$0")"
export NVCC=${NVCC:-nvcc} ARCH=${ARCH:-sm_90}
JOBS=${JOBS:-$(nproc)}
ls bundle*.cu | xargs -P "$JOBS" -n 1 bash -c '
  b=${1%.cu}
  if "$NVCC" -O3 -std=c++17 -rdc=true -arch="$ARCH" -o "$b" "$1" -lcuda > "$b.log" 2>&1; then
    cuobjdump -sass "$b" > "$b.sass" && echo "built $b"
  else
    echo "build failed: $b (see $b.log)"; exit 1
  fi' _
