// CUTLASS's ClusterTransactionBarrier with CuTe's SM90 bulk copy, as a
// one-stage TMA load: the producer arrives with the copy's byte count
// (`arrive_and_expect_tx`) and issues `cp.async.bulk` completing on the
// barrier; every consumer waits on phase 0 and reads the stage.
/* ptxmc-launch:
   --grid 1 --block 2
   --buffer src:int32[4]={1,2,3,4}
   --buffer out:int32[2]={-1,-1}
   --not-exists 'out[0] != 1 || out[1] != 4'
*/
#include <cute/arch/copy_sm90_tma.hpp>
#include <cutlass/arch/barrier.h>
__global__ void tma_stage(const int *src, int *out) {
  __shared__ alignas(16) int stage[4];
  __shared__ alignas(8) uint64_t full_storage;
  auto &full = *reinterpret_cast<cutlass::arch::ClusterTransactionBarrier *>(&full_storage);
  if (threadIdx.x == 0) {
    full.init(1);
    cutlass::arch::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    full.arrive_and_expect_tx(sizeof(stage));
    cute::SM90_BULK_COPY_G2S::copy(src, &full_storage, stage, sizeof(stage));
  }
  full.wait(0);
  out[threadIdx.x] = stage[threadIdx.x * 3];
}
