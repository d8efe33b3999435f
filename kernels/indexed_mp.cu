// A slot published by its index: CTA 0 fills slot 2 of a small table and
// then releases the slot's index; CTA 1 acquires the index and reads the
// slot it names. The address of that read is computed from a loaded value
// (docs/kernels.md, "Run-time addresses"). Correct.
/* ptxmc-launch:
   --grid 2 --buffer table:int32[4] --buffer index:int32[1]={-1} --buffer out:int32[1]
   --forall 'out[0] == 42'
*/
#include <cuda/atomic>
__global__ void indexed_mp(int *table, int *index, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_device> idx(*index);
  if (blockIdx.x == 0) {
    table[2] = 42;
    idx.store(2, cuda::memory_order_release);
  } else {
    int i;
    while ((i = idx.load(cuda::memory_order_acquire)) < 0) {}
    out[0] = table[i];
  }
}
