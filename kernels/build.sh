#!/usr/bin/env bash
# Compile every kernel of the corpus to the PTX checked in beside it.
#
#   kernels/build.sh          rewrite each FILE.ptx from FILE.cu (here and one folder down:
#                             scale/, not-yet/)
#   kernels/build.sh --check  compile into a temporary folder and fail if any
#                             checked-in FILE.ptx differs from what this nvcc emits
#
# Each kernel is compiled for sm_90a, or for the target its `// arch: sm_XXX`
# line names (kernels using tcgen05 say `// arch: sm_100a`).
# nvcc is taken from $NVCC, else from PATH. Its include folder (and the cccl
# folder inside it, for libcu++ and cuda::ptx) is found beside the binary, as
# the registry's nvidia-cuda-nvcc / nvidia-cuda-cccl wheels lay it out.
# Absolute paths in `.file` directives are made relative (the kernel's own
# source by its name, headers from the include folder), so the PTX is the same
# on every machine.
set -euo pipefail
cd "$(dirname "$0")"
nvcc="${NVCC:-$(command -v nvcc || true)}"
if [ -z "$nvcc" ]; then
    echo "error: no nvcc: set NVCC or put nvcc on PATH (python3 -m venv v && v/bin/pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-cccl)" >&2
    exit 2
fi
inc="$(cd "$(dirname "$nvcc")/../include" && pwd)"
# CUTLASS and CuTe headers: the registry's nvidia-cutlass wheel, beside nvcc's wheel.
cutlass="$(cd "$(dirname "$nvcc")/../../.." && pwd)/cutlass_library/source/include"
cutlass_flags=()
[ -d "$cutlass" ] && cutlass_flags=(-I"$cutlass")
check=0
[ "${1:-}" = "--check" ] && check=1
out="$(mktemp -d)"
# nvcc names internal-linkage symbols (in the debug strings) after a hash of
# the source's absolute path: compile from one fixed folder, the same on
# every machine, so the PTX does not depend on where the clone is.
src=/tmp/ptxmc-kernels-src
trap 'rm -rf "$out" "$src"' EXIT
rm -rf "$src"
mkdir -p "$src"
cp -r . "$src/"
status=0
for cu in *.cu */*.cu; do
    ptx="${cu%.cu}.ptx"
    mkdir -p "$out/$(dirname "$ptx")"
    if grep -q '#include <cu\(tlass\|te\)/' "$cu" && [ ${#cutlass_flags[@]} = 0 ]; then
        echo "error: kernels/$cu needs the CUTLASS headers: pip install nvidia-cutlass (into nvcc's venv)" >&2
        exit 2
    fi
    # A `// arch: sm_XXX` line in the .cu picks its target (tcgen05 needs
    # sm_100a); sm_90a otherwise. `ptxmc kernel FILE.cu` reads the same line.
    arch="$(sed -n 's|^// arch: \(sm_[0-9a-z]*\)[[:space:]]*$|\1|p' "$cu" | head -n 1)"
    arch="${arch:-sm_90a}"
    (cd "$src" && "$nvcc" -ptx -arch="$arch" -lineinfo -I"$inc" -I"$inc/cccl" "${cutlass_flags[@]}" "$cu" -o "$out/$ptx")
    sed -i -e "s|\"$src/$cu\"|\"$cu\"|" -e "s|\"$inc/|\"<include>/|" -e "s|\"$cutlass/|\"<cutlass>/|" "$out/$ptx"
    if [ $check = 1 ]; then
        if ! cmp -s "$out/$ptx" "$ptx"; then
            echo "kernels/$ptx differs from what $("$nvcc" --version | tail -1) emits for kernels/$cu" >&2
            status=1
        fi
    else
        cp "$out/$ptx" "$ptx"
    fi
done
exit $status
