// A TMA bulk store: CTA 0 stages a value in shared memory, makes it visible
// to the async proxy (fence.proxy.async), stores the stage to global memory
// with cp.async.bulk, waits for the bulk group and raises a flag; CTA 1
// acquires the flag and reads the stored value.
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
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
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
