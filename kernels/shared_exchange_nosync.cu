// Two threads of one CTA exchange values through shared memory, without
// __syncthreads between the writes and the reads: buggy (a data race).
/* ptxmc-launch:
   --grid 1 --block 2
   --buffer out:int32[2]
   --forall 'out[0] == 2 && out[1] == 1'
*/
__global__ void exchange(int *out) {
  __shared__ int s[2];
  unsigned t = threadIdx.x;
  s[t] = t + 1;
  out[t] = s[1 - t];
}
