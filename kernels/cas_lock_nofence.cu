// The CAS spin lock without fences: buggy, atomicCAS and atomicExch are
// relaxed, so the critical sections are not ordered.
/* ptxmc-launch:
   --grid 2 --block 1
   --buffer lock:int32[1] --buffer counter:int32[1]
   --forall 'counter[0] == 2'
*/
__global__ void locked_inc(int *lock, int *counter) {
  while (atomicCAS(lock, 0, 1) != 0) {}
  counter[0] = counter[0] + 1;
  atomicExch(lock, 0);
}
