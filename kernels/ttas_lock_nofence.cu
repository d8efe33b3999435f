// A test-and-test-and-set lock (spin reading, then CAS) around a plain
// increment, one thread in each of two CTAs, without fences: buggy.
/* ptxmc-launch:
   --grid 2 --block 1
   --buffer lock:int32[1] --buffer counter:int32[1]
   --forall 'counter[0] == 2'
*/
__global__ void ttas_inc(int *lock, int *counter) {
  while (true) {
    while (*(volatile int *)lock != 0) {}
    if (atomicCAS(lock, 0, 1) == 0) break;
  }
  counter[0] = counter[0] + 1;
  atomicExch(lock, 0);
}
