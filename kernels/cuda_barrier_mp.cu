// Two threads of a CTA hand over a value through a libcu++
// cuda::barrier (an mbarrier): thread 0 writes, both arrive_and_wait,
// thread 1 reads. Correct.
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
  bar.arrive_and_wait();
  if (threadIdx.x == 1) out[0] = data[0];
}
