// The grid barrier without the fences: buggy, the arrival does not publish
// the slot write, so a CTA may read the other's slot before it is written.
/* ptxmc-launch:
   --grid 2 --block 1
   --buffer slot:int32[2] --buffer count:int32[1] --buffer seen:int32[2]
   --forall 'seen[0] == 2 && seen[1] == 1'
*/
__global__ void grid_barrier(int *slot, int *count, int *seen) {
  unsigned b = blockIdx.x;
  slot[b] = b + 1;
  atomicAdd(count, 1);
  while (*(volatile int *)count < 2) {}
  seen[b] = slot[1 - b];
}
