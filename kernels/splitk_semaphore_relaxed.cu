// BUG: the semaphore is waited for with a relaxed load: the previous CTA's
// partial sum may not be visible yet.
/* ptxmc-launch:
   --grid 3
   --block 1
   --buffer sem:int32[1]
   --buffer tile:int32[1]
   --not-exists 'tile[0] != 6'
*/
#include <cuda/atomic>
__global__ void splitk(int *sem, int *tile) {
  int k = blockIdx.x;
  cuda::atomic_ref<int, cuda::thread_scope_device> s(*sem);
  while (s.load(cuda::memory_order_relaxed) != k) {
  }
  tile[0] = tile[0] + (k + 1);
  s.store(k + 1, cuda::memory_order_release);
}
