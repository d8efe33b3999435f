// BUG: acquire on lock, but the unlock is a relaxed store.
/* ptxmc-launch:
   --grid 2
   --block 1
   --buffer lock:int32[1]
   --buffer counter:int32[1]
   --not-exists 'counter[0] != 2'
*/
#include <cuda/atomic>
__global__ void locked_add(int *lock, int *counter) {
  cuda::atomic_ref<int, cuda::thread_scope_device> l(*lock);
  int expected = 0;
  while (!l.compare_exchange_strong(expected, 1, cuda::memory_order_acquire,
                                    cuda::memory_order_relaxed)) {
    expected = 0;
  }
  counter[0] = counter[0] + 1;
  l.store(0, cuda::memory_order_relaxed);
}
