// Relaxed atomicAdd never loses an update.
/* ptxmc-launch:
   --grid 2
   --block 1
   --buffer counter:int32[1]
   --not-exists 'counter[0] != 2'
*/
__global__ void count(int *counter) { atomicAdd(counter, 1); }
