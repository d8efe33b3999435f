// BUG: two arrivals on a barrier that expects one complete phases 0 and 1.
// A consumer that first looks after both waits for parity 0 while the
// current phase is 2, whose parity is also 0: it waits for phase 2, which
// never completes. (Seen as a hang on an H200.)
/* ptxmc-launch:
   --grid 1
   --block 2
   --buffer out:int32[1]={-1}
*/
#include <cuda/ptx>
#include <cstdint>
__global__ void handoff(int *out) {
  __shared__ volatile int s;
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) cuda::ptx::mbarrier_init(&bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    s = 9;
    cuda::ptx::mbarrier_arrive(&bar);
    cuda::ptx::mbarrier_arrive(&bar);
  } else {
    while (!cuda::ptx::mbarrier_try_wait_parity(&bar, 0)) {
    }
    out[0] = s;
  }
}
