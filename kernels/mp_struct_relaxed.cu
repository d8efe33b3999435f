// Message passing with the kernel's arguments in one struct passed by value
// (`--struct`, docs/kernels.md), the flag written and read relaxed: buggy,
// the reader may see the flag and still read the old data.
/* ptxmc-launch:
   --grid 2 --block 1
   --struct 'p{0:buffer=data:int32[1]; 8:buffer=flag:int32[1]; 16:buffer=out:int32[1]; 24:scalar=value:int32=42}'
   --forall 'out[0] == 42'
*/
#include <cuda/atomic>
struct Params {
  int *data;
  int *flag;
  int *out;
  int value;
};
__global__ void mp_struct(Params p) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(*p.flag);
  if (blockIdx.x == 0) {
    p.data[0] = p.value;
    f.store(1, cuda::memory_order_relaxed);
  } else {
    while (f.load(cuda::memory_order_relaxed) == 0) {}
    p.out[0] = p.data[0];
  }
}
