// BUG: the consumer waits for parity 1, which try_wait reports complete at
// once (the phase before phase 0): it reads the stage before the copy lands.
/* ptxmc-launch:
   --grid 1
   --block 2
   --buffer src:int32[4]={7,7,7,7}
   --buffer out:int32[1]={-1}
   --not-exists 'out[0] != 7'
*/
#include <cuda/ptx>
#include <cstdint>
__global__ void stage(const int *src, int *out) {
  __shared__ alignas(16) int buf[4];
  __shared__ uint64_t full;
  if (threadIdx.x == 0) cuda::ptx::mbarrier_init(&full, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                         cuda::ptx::space_shared, &full, 16);
    cuda::ptx::cp_async_bulk(cuda::ptx::space_shared, cuda::ptx::space_global, buf, src, 16,
                             &full);
  } else {
    while (!cuda::ptx::mbarrier_try_wait_parity(&full, 1)) {
    }
    out[0] = buf[0];
  }
}
