// BUG: no __syncthreads() between the shared-memory writes and the reads.
/* ptxmc-launch:
   --grid 1
   --block 64
   --buffer out:int32[2]={-1,-1}
   --not-exists 'out[0] != 2 \/ out[1] != 1'
*/
__global__ void exchange(int *out) {
  __shared__ int s[2];
  int w = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) s[w] = w + 1;
  if (threadIdx.x % 32 == 0) out[w] = s[1 - w];
}
