// A multicast tensor TMA load in a cluster of two CTAs of one thread each:
// each thread initialises its CTA's mbarrier and arms it with the box's 16
// bytes, the cluster synchronises (so both barriers are armed and initialised
// before any copy), CTA 0 multicasts the 2-element box at coordinate 2 of a
// 1-d int64 tensor into `buf` of both CTAs (ctaMask 0b11), and each thread waits on
// its own barrier and reads its copy.
/* ptxmc-launch:
   --grid 2
   --block 1
   --cluster 2
   --tensormap 'tensor:int64[4]box[2]={10,11,12,13}'
   --buffer out:int32[2]={-1,-1}
   --not-exists 'out[0] != 13 || out[1] != 13'
*/
#include <cuda.h>
#include <cuda/ptx>
#include <cooperative_groups.h>
#include <cstdint>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 1, 1) stage(const __grid_constant__ CUtensorMap tmap, int *out) {
  __shared__ alignas(128) long long buf[4];
  __shared__ uint64_t full;
  cg::cluster_group cluster = cg::this_cluster();
  cuda::ptx::mbarrier_init(&full, 1);
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                       cuda::ptx::space_shared, &full, 16);
  cluster.sync();
  if (cluster.block_rank() == 0) {
    const int32_t coords[1] = {2};
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, buf,
                                    &tmap, coords, &full, (uint16_t)0b11);
  }
  while (!cuda::ptx::mbarrier_try_wait_parity(&full, 0)) {
  }
  unsigned r = cluster.block_rank();
  out[r] = (int)buf[1];
}
