// Fixed cutlass_cluster_barrier: the same DSMEM hand-off with the barrier
// initialised by CUTLASS's ClusterBarrier, but the remote arrival is
// `mbarrier.arrive.release.cluster.shared::cluster` and the wait
// `mbarrier.try_wait.parity.acquire.cluster` (`cuda::ptx`): cluster-scoped,
// they synchronise, and the read sees the store.
/* ptxmc-launch:
   --grid 2 --block 1 --cluster 2
   --buffer out:int32[1]={-1}
   --not-exists 'out[0] != 42'
*/
#include <cooperative_groups.h>
#include <cuda/ptx>
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
    uint64_t *remote_bar = cluster.map_shared_rank(&bar_storage, 1);
    cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, cuda::ptx::scope_cluster,
                               cuda::ptx::space_cluster, remote_bar);
  } else {
    while (!cuda::ptx::mbarrier_try_wait_parity(cuda::ptx::sem_acquire, cuda::ptx::scope_cluster,
                                                &bar_storage, 0u)) {
    }
    out[0] = data;
  }
  cluster.sync();
}
