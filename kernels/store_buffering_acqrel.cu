// BUG: release/acquire is not enough for Dekker: both may read 0.
/* ptxmc-launch:
   --grid 2
   --block 1
   --buffer x:int32[2]
   --buffer out:int32[2]={-1,-1}
   --not-exists 'out[0] == 0 /\ out[1] == 0'
*/
#include <cuda/atomic>
__global__ void sb(int *x, int *out) {
  int b = blockIdx.x;
  cuda::atomic_ref<int, cuda::thread_scope_device> mine(x[b]), other(x[1 - b]);
  mine.store(1, cuda::memory_order_release);
  out[b] = other.load(cuda::memory_order_acquire);
}
