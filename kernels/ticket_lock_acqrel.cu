// A ticket lock: take a ticket with atomicAdd, wait for it to be served with
// an acquire load, increment a plain counter, serve the next with a release.
/* ptxmc-launch:
   --grid 2
   --block 1
   --buffer next:int32[1]
   --buffer serving:int32[1]
   --buffer counter:int32[1]
   --not-exists 'counter[0] != 2'
*/
#include <cuda/atomic>
__global__ void locked_add(int *next, int *serving, int *counter) {
  int ticket = atomicAdd(next, 1);
  cuda::atomic_ref<int, cuda::thread_scope_device> s(*serving);
  while (s.load(cuda::memory_order_acquire) != ticket) {
  }
  counter[0] = counter[0] + 1;
  s.store(ticket + 1, cuda::memory_order_release);
}
