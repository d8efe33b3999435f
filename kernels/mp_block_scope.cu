// BUG: release/acquire at thread_scope_block between two CTAs: the scope
// does not include the other CTA, so the pair does not synchronise.
/* ptxmc-launch:
   --grid 2
   --block 1
   --buffer data:int32[1]
   --buffer flag:int32[1]
   --buffer out:int32[1]={-1}
   --not-exists 'out[0] == 0'
*/
#include <cuda/atomic>
__global__ void mp(int *data, int *flag, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_block> f(*flag);
  if (blockIdx.x == 0) {
    data[0] = 42;
    f.store(1, cuda::memory_order_release);
  } else {
    while (f.load(cuda::memory_order_acquire) == 0) {
    }
    out[0] = data[0];
  }
}
