// Appending to a bounded queue: each of four threads takes a ticket with
// atomicAdd and writes its item at the slot the ticket names, if the
// ticket is below the queue's capacity of 3. The slot's address is
// computed from the value the atomic returned (docs/kernels.md, "Run-time
// addresses"). Correct: the three slots hold three distinct items.
/* ptxmc-launch:
   --block 4 --buffer items:int32[3] --buffer count:int32[1]
   --forall 'items[0] != 0 /\ items[1] != 0 /\ items[2] != 0 /\ items[0] != items[1] /\ items[0] != items[2] /\ items[1] != items[2]'
*/
__global__ void queue_append(int *items, int *count) {
  int i = atomicAdd(count, 1);
  if (i < 3) items[i] = threadIdx.x + 1;
}
