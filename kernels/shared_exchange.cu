// Two threads of one CTA exchange values through shared memory, with
// __syncthreads between the writes and the reads: correct.
/* ptxmc-launch:
   --grid 1 --block 2
   --buffer out:int32[2]
   --forall 'out[0] == 2 && out[1] == 1'
*/
__global__ void exchange(int *out) {
  __shared__ int s[2];
  unsigned t = threadIdx.x;
  s[t] = t + 1;
  __syncthreads();
  out[t] = s[1 - t];
}
