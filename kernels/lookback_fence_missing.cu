// BUG: the flag is published with a relaxed store: a successor may see the
// flag and still read the old prefix.
/* ptxmc-launch:
   --grid 3
   --block 1
   --buffer prefix:int32[3]
   --buffer flag:int32[3]
   --not-exists 'prefix[2] != 6'
*/
#include <cuda/atomic>
__global__ void scan(int *prefix, int *flag) {
  int b = blockIdx.x;
  int mine = b + 1;
  int before = 0;
  if (b > 0) {
    cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[b - 1]);
    while (f.load(cuda::memory_order_acquire) == 0) {
    }
    before = prefix[b - 1];
  }
  prefix[b] = before + mine;
  cuda::atomic_ref<int, cuda::thread_scope_device> g(flag[b]);
  g.store(1, cuda::memory_order_relaxed);
}
