// BUG: as elect_flag_syncwarp without __syncwarp: the elected lane
// publishes the flag, but elect.sync orders no memory, so the other lanes'
// stores are not ordered before its release: the reader may see the flag
// and stale data.
/* ptxmc-launch:
   --grid 1 --block 33
   --buffer data:int32[2] --buffer flag:int32[1] --buffer out:int32[3]
   --forall 'out[0] == 0 || (out[1] == 1 && out[2] == 2)'
*/
#include <cuda/atomic>
#include <cuda/ptx>
__global__ void elect_flag_nosync(int *data, int *flag, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_block> f(*flag);
  unsigned t = threadIdx.x;
  if (t < 2) {
    // Lanes 0 and 1 of warp 0 (lanes 2..31 exit at once: mask 0x3).
    data[t] = t + 1;
    if (cuda::ptx::elect_sync(0x3)) {
      f.store(1, cuda::memory_order_release);
    }
  } else if (t == 32) {
    out[0] = f.load(cuda::memory_order_acquire);
    out[1] = data[0];
    out[2] = data[1];
  }
}
