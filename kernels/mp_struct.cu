// Message passing with the kernel's arguments in one struct passed by value,
// as CUTLASS kernels take their `Params`: `.param .align 8 .b8 P[32]`, bound
// field by field with `--struct` (docs/kernels.md). Release/acquire on the
// flag: correct.
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
    f.store(1, cuda::memory_order_release);
  } else {
    while (f.load(cuda::memory_order_acquire) == 0) {}
    p.out[0] = p.data[0];
  }
}
