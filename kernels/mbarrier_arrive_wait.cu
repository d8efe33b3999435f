// Producer/consumer between two threads through an mbarrier: the producer
// stores to shared memory and arrives (release); the consumer waits (acquire).
/* ptxmc-launch:
   --grid 1
   --block 2
   --buffer out:int32[1]={-1}
   --not-exists 'out[0] != 9'
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
  } else {
    while (!cuda::ptx::mbarrier_try_wait_parity(&bar, 0)) {
    }
    out[0] = s;
  }
}
