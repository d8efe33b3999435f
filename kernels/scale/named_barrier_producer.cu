// Warp 0 produces into shared memory and arrives on named barrier 1 for 64
// threads; warp 1 syncs on it and consumes (CUTLASS's NamedBarrier pattern).
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
