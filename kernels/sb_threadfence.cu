// Store buffering between two CTAs: each writes its flag, runs
// __threadfence (fence.sc.gpu) and reads the other's. Correct: both
// cannot read 0.
/* ptxmc-launch:
   --grid 2 --block 1
   --buffer flag:int32[2] --buffer seen:int32[2]
   --forall 'seen[0] == 1 || seen[1] == 1'
*/
__global__ void sb(volatile int *flag, int *seen) {
  unsigned b = blockIdx.x;
  flag[b] = 1;
  __threadfence();
  seen[b] = flag[1 - b];
}
