// BUG: a plain read-modify-write loses updates.
/* ptxmc-launch:
   --grid 2
   --block 1
   --buffer counter:int32[1]
   --not-exists 'counter[0] != 2'
*/
__global__ void count(int *counter) { counter[0] = counter[0] + 1; }
