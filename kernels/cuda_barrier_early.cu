// The same hand-over, but thread 1 reads before it waits on the
// cuda::barrier: buggy (a data race; it may read 0).
/* ptxmc-launch:
   --grid 1 --block 2
   --buffer data:int32[1] --buffer out:int32[1]
   --forall 'out[0] == 42'
*/
#include <cuda/barrier>
__global__ void bar_mp(int *data, int *out) {
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, 2);
  __syncthreads();
  if (threadIdx.x == 0) data[0] = 42;
  if (threadIdx.x == 1) out[0] = data[0];
  bar.arrive_and_wait();
}
