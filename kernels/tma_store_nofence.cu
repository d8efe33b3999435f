// BUG: no fence.proxy.async between the generic write of the stage and the
// bulk store that reads it: the async proxy may read the stage before the
// write, and CTA 1 reads a stale value (otherwise as tma_store_wait).
/* ptxmc-launch:
   --grid 2
   --block 1
   --buffer dst:int32[4]
   --buffer flag:int32[1]
   --buffer out:int32[1]={-1}
   --not-exists 'out[0] != 9'
*/
#include <cuda/atomic>
#include <cuda/ptx>
__global__ void publish(int *dst, int *flag, int *out) {
  __shared__ alignas(16) int buf[4];
  cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
  if (blockIdx.x == 0) {
    buf[0] = 9;
    cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, dst, buf, 16);
    cuda::ptx::cp_async_bulk_commit_group();
    cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>());
    f.store(1, cuda::memory_order_release);
  } else {
    while (f.load(cuda::memory_order_acquire) == 0) {
    }
    out[0] = dst[0];
  }
}
