// A slot published by its index, with a relaxed store of the index: CTA 1
// may see the index and still read the slot's old value (0). The address
// of that read is computed from a loaded value (docs/kernels.md,
// "Run-time addresses"). Buggy: out[0] may be 0.
/* ptxmc-launch:
   --grid 2 --buffer table:int32[4] --buffer index:int32[1]={-1} --buffer out:int32[1]
   --forall 'out[0] == 42'
*/
#include <cuda/atomic>
__global__ void indexed_mp_relaxed(int *table, int *index, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_device> idx(*index);
  if (blockIdx.x == 0) {
    table[2] = 42;
    idx.store(2, cuda::memory_order_relaxed);
  } else {
    int i;
    while ((i = idx.load(cuda::memory_order_acquire)) < 0) {}
    out[0] = table[i];
  }
}
