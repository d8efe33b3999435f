// A CAS spin lock with __threadfence() after acquiring and before releasing
// (the classic CUDA lock): two CTAs each increment a plain counter under it.
/* ptxmc-launch:
   --grid 2
   --block 1
   --buffer lock:int32[1]
   --buffer counter:int32[1]
   --not-exists 'counter[0] != 2'
*/
__global__ void locked_add(int *lock, int *counter) {
  while (atomicCAS(lock, 0, 1) != 0) {
  }
  __threadfence();
  counter[0] = counter[0] + 1;
  __threadfence();
  atomicExch(lock, 0);
}
