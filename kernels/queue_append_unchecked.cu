// Appending to a bounded queue without checking the ticket: four threads
// take tickets with atomicAdd and write their items at the slots the
// tickets name, but the queue has 3 slots, so the thread with ticket 3
// writes past the end: an undefined step at the store (docs/kernels.md,
// "Run-time addresses"). Buggy: undefined.
/* ptxmc-launch:
   --block 4 --buffer items:int32[3] --buffer count:int32[1]
   --forall 'items[0] != 0 /\ items[1] != 0 /\ items[2] != 0 /\ items[0] != items[1] /\ items[0] != items[2] /\ items[1] != items[2]'
*/
__global__ void queue_append_unchecked(int *items, int *count) {
  int i = atomicAdd(count, 1);
  items[i] = threadIdx.x + 1;
}
