// BUG: data and flag written by one 8-byte vector store (st.global.v2.u32).
// The elements of a vector access are performed in an unspecified order
// (PTX ISA, Memory Consistency Model, "Vector Data-types"), so a reader that
// sees the flag may still read the old data, fence or not.
/* ptxmc-launch:
   --grid 2 --block 1
   --buffer buf:int32[2] --buffer out:int32[2]
   --forall 'out[0] == 0 || out[1] == 42'
*/
__global__ void vector_flag(int *buf, int *out) {
  if (blockIdx.x == 0) {
    *reinterpret_cast<int2 *>(buf) = make_int2(42, 1);
  } else {
    volatile int *v = buf;
    int flag = v[1];
    __threadfence();
    int data = v[0];
    out[0] = flag;
    out[1] = data;
  }
}
