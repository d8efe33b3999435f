// Message passing with volatile accesses and __threadfence() on both sides
// (the CUDA Programming Guide's pattern).
/* ptxmc-launch:
   --grid 2
   --block 1
   --buffer data:int32[1]
   --buffer flag:int32[1]
   --buffer out:int32[1]={-1}
   --not-exists 'out[0] == 0'
*/
__global__ void mp(int *data, volatile int *flag, int *out) {
  if (blockIdx.x == 0) {
    data[0] = 42;
    __threadfence();
    *flag = 1;
  } else {
    while (*flag == 0) {
    }
    __threadfence();
    out[0] = ((volatile int *)data)[0];
  }
}
