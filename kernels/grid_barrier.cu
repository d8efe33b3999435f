// A grid barrier on an arrival counter: each CTA writes its slot, fences,
// arrives with atomicAdd, spins until all arrived, fences, and reads the
// other CTA's slot. Correct.
/* ptxmc-launch:
   --grid 2 --block 1
   --buffer slot:int32[2] --buffer count:int32[1] --buffer seen:int32[2]
   --forall 'seen[0] == 2 && seen[1] == 1'
*/
__global__ void grid_barrier(int *slot, int *count, int *seen) {
  unsigned b = blockIdx.x;
  slot[b] = b + 1;
  __threadfence();
  atomicAdd(count, 1);
  while (*(volatile int *)count < 2) {}
  __threadfence();
  seen[b] = slot[1 - b];
}
