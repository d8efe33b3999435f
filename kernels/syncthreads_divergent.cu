// __syncthreads inside a branch that only thread 0 takes, while thread 1
// waits for thread 0's flag: buggy. Under the PTX ISA, bar.sync waits for
// every thread of the CTA that has not exited, and thread 1 never arrives:
// the kernel hangs.
/* ptxmc-launch:
   --grid 1 --block 2
   --buffer data:int32[1] --buffer flag:int32[1] --buffer out:int32[1]
   --forall 'out[0] == 7'
*/
__global__ void exchange(int *data, volatile int *flag, int *out) {
  if (threadIdx.x == 0) {
    data[0] = 7;
    __syncthreads();
    *flag = 1;
  } else {
    while (*flag == 0) {}
    out[0] = data[0];
  }
}
