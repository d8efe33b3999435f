// A CAS spin lock around a plain read-modify-write of a counter, one thread
// in each of two CTAs, with __threadfence after acquiring and before
// releasing: correct.
/* ptxmc-launch:
   --grid 2 --block 1
   --buffer lock:int32[1] --buffer counter:int32[1]
   --forall 'counter[0] == 2'
*/
__global__ void locked_inc(int *lock, int *counter) {
  while (atomicCAS(lock, 0, 1) != 0) {}
  __threadfence();
  counter[0] = counter[0] + 1;
  __threadfence();
  atomicExch(lock, 0);
}
