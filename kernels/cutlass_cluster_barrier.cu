// BUG: CUTLASS's ClusterBarrier as a DSMEM hand-off. CTA 0 stores into CTA
// 1's shared memory, then arrives remotely on CTA 1's barrier
// (`ClusterBarrier::arrive(cta_id, pred)`: `mbarrier.arrive.shared::cluster`,
// whose defaults are `.release.cta`); CTA 1 waits on the barrier's phase 0
// (`mbarrier.try_wait.parity`, `.acquire.cta`) and reads. Both are scoped to
// their own CTA, so the arrival and the wait are not morally strong: the
// release does not reach CTA 1 and the read may miss the store. (CUTLASS
// uses remote arrivals for "buffer empty" signals, where no data flows.)
/* ptxmc-launch:
   --grid 2 --block 1 --cluster 2
   --buffer out:int32[1]={-1}
   --not-exists 'out[0] != 42'
*/
#include <cooperative_groups.h>
#include <cutlass/arch/barrier.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 1, 1) handoff(int *out) {
  __shared__ int data;
  // Shared storage aliased as the barrier, as CUTLASS's SharedStorage does.
  __shared__ alignas(8) uint64_t bar_storage;
  auto &bar = *reinterpret_cast<cutlass::arch::ClusterBarrier *>(&bar_storage);
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  if (rank == 1) {
    bar.init(1);
    cutlass::arch::fence_barrier_init();
  }
  cluster.sync();
  if (rank == 0) {
    int *remote = cluster.map_shared_rank(&data, 1);
    *remote = 42;
    bar.arrive(1, true);
  } else {
    bar.wait(0);
    out[0] = data;
  }
  cluster.sync();
}
