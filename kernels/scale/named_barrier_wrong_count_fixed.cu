// The fix of named_barrier_wrong_count: both warps give named barrier 1 the
// count 64 (two warps), so the consumer's bar.sync completes only once the
// producer warp, whose lane 0 stored first, has arrived.
/* ptxmc-launch:
   --grid 1
   --block 64
   --buffer out:int32[1]={-1}
   --not-exists 'out[0] != 5'
*/
__global__ void produce(int *out) {
  __shared__ volatile int s;
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) s = 5;
    asm volatile("bar.arrive 1, 64;" ::: "memory");
  } else {
    asm volatile("bar.sync 1, 64;" ::: "memory");
    if (threadIdx.x == 32) out[0] = s;
  }
}
