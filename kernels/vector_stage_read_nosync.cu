// BUG: the stage is read with one 16-byte vector load (ld.shared.v4.u32)
// without __syncthreads after the four threads' writes: elements may be
// stale (the vector load orders nothing either).
/* ptxmc-launch:
   --grid 1 --block 4
   --buffer out:int32[4]
   --forall 'out[0] == 1 && out[1] == 2 && out[2] == 3 && out[3] == 4'
*/
__global__ void stage_read_nosync(int4 *out) {
  __shared__ int4 stage;
  unsigned t = threadIdx.x;
  reinterpret_cast<int *>(&stage)[t] = t + 1;
  if (t == 0) {
    out[0] = stage;
  }
}
