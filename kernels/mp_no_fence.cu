// BUG: volatile flag, no fence at all.
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
    *flag = 1;
  } else {
    while (*flag == 0) {
    }
    out[0] = ((volatile int *)data)[0];
  }
}
