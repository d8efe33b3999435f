// BUG: __syncthreads() in divergent code. Warp 0 waits at the barrier; lane 32
// of warp 1 never reaches it, spinning on a flag that warp 0 sets only after
// the barrier. A count-less bar.sync waits for every thread of the CTA that
// has not exited (threads 33..63 exit at once): a hang.
/* ptxmc-launch:
   --grid 1
   --block 64
   --buffer flag:int32[1]
   --buffer out:int32[1]
*/
__global__ void divergent(volatile int *flag, int *out) {
  if (threadIdx.x < 32) {
    __syncthreads();
    if (threadIdx.x == 0) *flag = 1;
  } else if (threadIdx.x == 32) {
    while (*flag == 0) {
    }
    out[0] = 1;
  }
}
