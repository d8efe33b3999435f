// A 2-d tensor TMA load: thread 0 initialises an mbarrier, both threads
// synchronise, thread 0 arms the barrier with the box's 32 bytes and loads the
// 2x2 box at coordinates (2, 1) of a 4x4 int64 tensor into shared memory; thread 1
// waits on phase 0 and reads the box's first and last elements (tensor
// elements 6 and 11).
/* ptxmc-launch:
   --grid 1
   --block 2
   --tensormap 'tensor:int64[4,4]box[2,2]={0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}'
   --buffer out:int32[2]={-1,-1}
   --not-exists 'out[0] != 6 || out[1] != 11'
*/
#include <cuda.h>
#include <cuda/ptx>
#include <cstdint>
__global__ void stage(const __grid_constant__ CUtensorMap tmap, int *out) {
  __shared__ alignas(128) long long buf[4];
  __shared__ uint64_t full;
  if (threadIdx.x == 0) cuda::ptx::mbarrier_init(&full, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                         cuda::ptx::space_shared, &full, 32);
    const int32_t coords[2] = {2, 1};
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_shared, cuda::ptx::space_global, buf,
                                    &tmap, coords, &full);
  } else {
    while (!cuda::ptx::mbarrier_try_wait_parity(&full, 0)) {
    }
    out[0] = (int)buf[0];
    out[1] = (int)buf[3];
  }
}
