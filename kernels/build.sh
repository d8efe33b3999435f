#!/bin/sh
# Recompile every kernel of the corpus to PTX (nvcc 13.x from the
# nvidia-cuda-nvcc wheel; no GPU needed). Usage: kernels/build.sh [NVCC]
set -e
cd "$(dirname "$0")"
NVCC=${1:-${NVCC:-nvcc}}
ROOT=$(dirname "$(dirname "$(command -v "$NVCC" || echo "$NVCC")")")
for f in *.cu; do
  "$NVCC" -ptx -arch=sm_90a -lineinfo -I"$ROOT/include" -I"$ROOT/include/cccl" "$f" -o "${f%.cu}.ptx"
done
