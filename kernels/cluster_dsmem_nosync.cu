// BUG: no cluster barrier between the shared writes and the remote reads.
/* ptxmc-launch:
   --grid 2
   --block 1
   --cluster 2
   --buffer out:int32[2]={-1,-1}
   --not-exists 'out[0] != 2 \/ out[1] != 1'
*/
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 1, 1) exchange(int *out) {
  __shared__ int word;
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  word = rank + 1;
  int *other = cluster.map_shared_rank(&word, rank ^ 1);
  out[rank] = *other;
  cluster.sync();
}
