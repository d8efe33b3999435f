// BUG: the same lock without fences: atomicCAS and atomicExch are relaxed,
// so the critical sections are not ordered and an increment can be lost.
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
  counter[0] = counter[0] + 1;
  atomicExch(lock, 0);
}
