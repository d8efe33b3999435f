// Message passing across two CTAs with __threadfence (fence.sc.gpu) on both
// sides and volatile flag accesses: correct.
/* ptxmc-launch:
   --grid 2 --block 1
   --buffer data:int32[1] --buffer flag:int32[1] --buffer out:int32[1]
   --forall 'out[0] == 42'
*/
__global__ void mp(int *data, volatile int *flag, int *out) {
  if (blockIdx.x == 0) {
    data[0] = 42;
    __threadfence();
    *flag = 1;
  } else {
    while (*flag == 0) {}
    __threadfence();
    out[0] = data[0];
  }
}
