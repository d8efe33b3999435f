// Bug: the MMA thread does not order its tensor-core work after its wait on
// `full` (no tcgen05.fence::after_thread_sync): the MMA may read the tiles
// from before the producer's stores, and the epilogue reads mma(0, 0, 7) = 7
// (or 5000, or 0) with both waits successful (docs/tensor-core.md §1; the
// litmus test Pipeline-tma-mma-ld-no-fence-mma). Fixed by
// tcgen05_pipeline.cu. Otherwise as it:
// a Blackwell tensor-core pipeline in one CTA (sm_100a), written with
// cuda::ptx (and the MMA as inline PTX): thread 0 allocates tensor memory and initialises two
// mbarriers; thread 1 (producer) writes the A and B tiles with generic
// stores, fences them into the async proxy and arrives on `full`; thread 0
// (MMA) waits on `full` once, orders its tensor-core work after the wait
// with tcgen05.fence::after_thread_sync, issues tcgen05.mma from the shared
// tiles into tensor memory and commits to `done`; thread 2 (epilogue)
// waits on `done` once, fences, loads the accumulator with tcgen05.ld and
// waits for the load. Each wait is tried once and its result recorded in
// `ok` (a thread that issues tensor-core operations has no branches,
// docs/tensor-core.md §5): once both waits succeed the epilogue reads
// mma(0, 5, 7) = 5007.
// arch: sm_100a
/* ptxmc-launch:
   --block 3
   --buffer out:int32[1]={-1}
   --buffer ok:int32[2]
   --not-exists 'ok[0] == 1 /\ ok[1] == 1 /\ out[0] != 5007'
*/
#include <cuda/ptx>
#include <cstdint>

// A shared-memory matrix descriptor (PTX ISA, tcgen05 "Shared Memory
// Descriptor"): start address (addr & 0x3FFFF) >> 4 in bits 0-13, leading
// and stride byte offsets >> 4 in bits 16-29 and 32-45, version 1 in bits
// 46-47, no swizzle.
__device__ __forceinline__ uint64_t smem_desc(const void *p) {
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  return static_cast<uint64_t>((a & 0x3FFFF) >> 4) | (static_cast<uint64_t>(128 >> 4) << 16) |
         (static_cast<uint64_t>(256 >> 4) << 32) | (static_cast<uint64_t>(1) << 46);
}

// One non-blocking try of an mbarrier phase, as CUTLASS's
// ClusterBarrier::try_wait writes it: 1 if the phase completed.
__device__ __forceinline__ uint32_t try_wait_once(uint64_t *bar, uint32_t phase) {
  uint32_t done;
  asm volatile("{\n.reg .pred P;\nmbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\n"
               "selp.b32 %0, 1, 0, P;\n}"
               : "=r"(done)
               : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar))), "r"(phase)
               : "memory");
  return done;
}

// Instruction descriptor for kind::f16: f32 accumulator (bits 4-5 = 1),
// f16 A and B, K-major, N = 8 (bits 17-22 = N >> 3), M = 64 (bits 24-28 = M >> 4).
constexpr uint32_t IDESC = (1u << 4) | ((8u >> 3) << 17) | ((64u >> 4) << 24);

__global__ void tcgen05_pipeline(int *out, int *ok) {
  __shared__ alignas(128) unsigned short a[64 * 16];
  __shared__ alignas(128) unsigned short b[8 * 16];
  __shared__ uint64_t full, done;
  __shared__ uint32_t tmem_base;
  namespace ptx = cuda::ptx;
  if (threadIdx.x == 0) {
    ptx::tcgen05_alloc(ptx::cta_group_1, &tmem_base, 32);
    ptx::mbarrier_init(&full, 1);
    ptx::mbarrier_init(&done, 1);
  }
  ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  ptx::tcgen05_fence_after_thread_sync();
  uint32_t tmem = tmem_base;
  if (threadIdx.x == 1) {
    a[0] = 5;
    b[0] = 7;
    ptx::fence_proxy_async(ptx::space_shared);
    ptx::mbarrier_arrive(&full);
  } else if (threadIdx.x == 0) {
    ok[0] = try_wait_once(&full, 0);
    // Bug: no tcgen05.fence::after_thread_sync here.
    // cuda::ptx's tcgen05_mma overloads are ambiguous here (nvcc 13.5): the
    // instruction as CUTLASS's SM100_MMA_F16BF16_SS writes it.
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                 "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}"
                 :
                 : "r"(tmem), "l"(smem_desc(a)), "l"(smem_desc(b)), "r"(IDESC), "r"(0)
                 : "memory");
    ptx::tcgen05_commit(ptx::cta_group_1, &done);
  } else {
    ok[1] = try_wait_once(&done, 0);
    ptx::tcgen05_fence_after_thread_sync();
    uint32_t d[1];
    ptx::tcgen05_ld_32x32b(d, tmem);
    ptx::tcgen05_wait_ld();
    out[0] = static_cast<int>(d[0]);
  }
}
