// Bug: no wgmma.fence before the first wgmma.mma_async: undefined behaviour
// (PTX ISA 9.7.15.7.1; both engines report it, docs/tensor-core.md §3b).
// ptxmc's fallback shows what goes wrong: the thread orders its tile stores
// before the async proxy with fence.proxy.async, but without wgmma.fence
// nothing orders the MMA after them, so it may read the tiles before the
// stores, mma(0, 0, 7) = 7 or mma(0, 5, 0) = 5000 or 0
// (docs/tensor-core.md §1). Fixed by wgmma_fenced.cu.
// arch: sm_90a
/* ptxmc-launch:
   --block 1
   --buffer out:int32[1]={-1}
   --not-exists 'out[0] != 5007'
*/
#include <cstdint>

// A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"):
// start address (addr & 0x3FFFF) >> 4 in bits 0-13, leading and stride
// byte offsets >> 4 in bits 16-29 and 32-45, no swizzle.
__device__ __forceinline__ uint64_t smem_desc(const void *p) {
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  return static_cast<uint64_t>((a & 0x3FFFF) >> 4) | (static_cast<uint64_t>(128 >> 4) << 16) |
         (static_cast<uint64_t>(256 >> 4) << 32);
}

__global__ void wgmma_mp(int *out) {
  __shared__ alignas(128) unsigned short a[64 * 16];
  __shared__ alignas(128) unsigned short b[8 * 16];
  a[0] = 5;
  b[0] = 7;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  float d0, d1, d2, d3;  // the accumulator fragment (m64n8, f32: 4 registers a thread)
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}"
               : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
               : "l"(smem_desc(a)), "l"(smem_desc(b)), "r"(0)
               : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  out[0] = __float_as_int(d0);
}
// Launched as one thread this kernel is undefined: wgmma's .aligned needs all 128 threads of
// the warpgroup (PTX ISA 9.7.15.5.2); an H200 stops the launch with "an illegal instruction was
// encountered". ptxmc reports it (undefined kind `warpgroup`, docs/tensor-core.md §5a).
