// __syncthreads reached by every thread of the block: thread 1 reads what
// thread 0 wrote before the barrier. Correct.
/* ptxmc-launch:
   --grid 1 --block 2
   --buffer data:int32[1] --buffer flag:int32[1] --buffer out:int32[1]
   --forall 'out[0] == 7'
*/
__global__ void exchange(int *data, volatile int *flag, int *out) {
  if (threadIdx.x == 0) data[0] = 7;
  __syncthreads();
  if (threadIdx.x == 1) out[0] = data[0];
}
