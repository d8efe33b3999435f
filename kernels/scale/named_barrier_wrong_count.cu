// BUG: the consumer syncs on named barrier 1 with a count of 32: a warp's
// arrival counts 32 threads (PTX ISA 9.7.13.1, "marks warps' arrival at
// barrier"), so the consumer warp completes the phase alone and reads before
// the producer's store; when the producer warp arrives first, the phase has
// counts 64 and 32 (undefined) and never completes.
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
    asm volatile("bar.sync 1, 32;" ::: "memory");
    if (threadIdx.x == 32) out[0] = s;
  }
}
