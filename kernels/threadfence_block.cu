// The same message passing with __threadfence_block (a CTA-scope fence)
// between two CTAs: buggy, the fences do not order anything across CTAs.
/* ptxmc-launch:
   --grid 2 --block 1
   --buffer data:int32[1] --buffer flag:int32[1] --buffer out:int32[1]
   --forall 'out[0] == 42'
*/
__global__ void mp(int *data, volatile int *flag, int *out) {
  if (blockIdx.x == 0) {
    data[0] = 42;
    __threadfence_block();
    *flag = 1;
  } else {
    while (*flag == 0) {}
    __threadfence_block();
    out[0] = data[0];
  }
}
