// A ticket lock: take a ticket with atomicAdd, wait until it is served,
// increment a plain counter, serve the next ticket; fenced: correct.
/* ptxmc-launch:
   --grid 2 --block 1
   --buffer next:int32[1] --buffer serving:int32[1] --buffer counter:int32[1]
   --forall 'counter[0] == 2 && serving[0] == 2'
*/
__global__ void ticket_inc(int *next, int *serving, int *counter) {
  int t = atomicAdd(next, 1);
  while (*(volatile int *)serving != t) {}
  __threadfence();
  counter[0] = counter[0] + 1;
  __threadfence();
  atomicAdd(serving, 1);
}
