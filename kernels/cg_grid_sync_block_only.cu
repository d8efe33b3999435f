// The bug of cg_grid_sync.cu: the CTA's barrier where the grid's is
// needed (`this_thread_block().sync()` for `this_grid().sync()`). It orders
// the CTA's own threads only, so a reader may see the next CTA's slot
// before that CTA wrote it (out[i] == 0).
/* ptxmc-launch:
   --grid 3 --block 2 --cooperative
   --buffer slot:int32[3] --buffer out:int32[3]
   --forall 'out[0] == 2 && out[1] == 3 && out[2] == 1'
*/
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void grid_publish(int *slot, int *out) {
  cg::thread_block block = cg::this_thread_block();
  if (threadIdx.x == 0) slot[blockIdx.x] = blockIdx.x + 1;
  block.sync();
  if (threadIdx.x == 1) out[blockIdx.x] = slot[(blockIdx.x + 1) % gridDim.x];
}
