// Four threads fill a shared-memory stage, __syncthreads, then thread 0
// reads the whole stage with one 16-byte vector load (ld.shared.v4.u32, how
// a consumer reads a TMA stage): correct, every element is the new value.
/* ptxmc-launch:
   --grid 1 --block 4
   --buffer out:int32[4]
   --forall 'out[0] == 1 && out[1] == 2 && out[2] == 3 && out[3] == 4'
*/
__global__ void stage_read(int4 *out) {
  __shared__ int4 stage;
  unsigned t = threadIdx.x;
  reinterpret_cast<int *>(&stage)[t] = t + 1;
  __syncthreads();
  if (t == 0) {
    out[0] = stage;
  }
}
