// A slot published by its index, off by one: CTA 0 fills the last slot of
// a four-slot table but publishes index 4, one past the end; CTA 1 reads
// table[4]. The read is out of bounds: an undefined step at the read
// (docs/kernels.md, "Run-time addresses"). Buggy: undefined.
/* ptxmc-launch:
   --grid 2 --buffer table:int32[4] --buffer index:int32[1]={-1} --buffer out:int32[1]
   --forall 'out[0] == 42'
*/
#include <cuda/atomic>
__global__ void indexed_mp_oob(int *table, int *index, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_device> idx(*index);
  if (blockIdx.x == 0) {
    table[3] = 42;
    idx.store(4, cuda::memory_order_release);
  } else {
    int i;
    while ((i = idx.load(cuda::memory_order_acquire)) < 0) {}
    out[0] = table[i];
  }
}
