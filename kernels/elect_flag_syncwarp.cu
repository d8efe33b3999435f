// Lanes 0 and 1 of warp 0 each write their slot of `data`, __syncwarp(0x3),
// then one elected lane (elect.sync) publishes the flag with a release store.
// Thread 32 (warp 1) acquires the flag and reads both slots:
// correct, __syncwarp orders every lane's store before the leader's release,
// whichever lane is elected.
/* ptxmc-launch:
   --grid 1 --block 33
   --buffer data:int32[2] --buffer flag:int32[1] --buffer out:int32[3]
   --forall 'out[0] == 0 || (out[1] == 1 && out[2] == 2)'
*/
#include <cuda/atomic>
#include <cuda/ptx>
__global__ void elect_flag(int *data, int *flag, int *out) {
  cuda::atomic_ref<int, cuda::thread_scope_block> f(*flag);
  unsigned t = threadIdx.x;
  if (t < 2) {
    // Lanes 0 and 1 of warp 0 (lanes 2..31 exit at once: mask 0x3).
    data[t] = t + 1;
    __syncwarp(0x3);
    if (cuda::ptx::elect_sync(0x3)) {
      f.store(1, cuda::memory_order_release);
    }
  } else if (t == 32) {
    out[0] = f.load(cuda::memory_order_acquire);
    out[1] = data[0];
    out[2] = data[1];
  }
}
