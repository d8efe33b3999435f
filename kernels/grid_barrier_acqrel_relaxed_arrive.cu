// BUG: the arrival is relaxed: a CTA may pass the barrier and read a slot
// before the slot's store is visible.
/* ptxmc-launch:
   --grid 3
   --block 1
   --buffer slot:int32[3]
   --buffer count:int32[1]
   --buffer out:int32[3]={-1,-1,-1}
   --not-exists 'out[0] != 2 \/ out[1] != 3 \/ out[2] != 1'
*/
#include <cuda/atomic>
__global__ void gridsync(int *slot, int *count, int *out) {
  int b = blockIdx.x;
  slot[b] = b + 1;
  cuda::atomic_ref<int, cuda::thread_scope_device> c(*count);
  c.fetch_add(1, cuda::memory_order_relaxed);
  while (c.load(cuda::memory_order_acquire) < (int)gridDim.x) {
  }
  out[b] = slot[(b + 1) % gridDim.x];
}
