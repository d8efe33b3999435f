// The fix: every thread passes __syncthreads() before the flag is awaited.
/* ptxmc-launch:
   --grid 1
   --block 64
   --buffer flag:int32[1]
   --buffer out:int32[1]
   --not-exists 'out[0] != 1'
*/
__global__ void divergent(volatile int *flag, int *out) {
  __syncthreads();
  if (threadIdx.x == 0) {
    *flag = 1;
  } else if (threadIdx.x == 32) {
    while (*flag == 0) {
    }
    out[0] = 1;
  }
}
