// Two grid barriers in a row: the second starts from the workspace word the
// first left (top bit set), so it checks the sense reversal, not only a
// barrier from zero. Each CTA publishes, reads its neighbour's value into
// `mid` after the first barrier, and its neighbour's `mid` after the
// second: out[i] is the value of CTA i+2. Correct.
/* ptxmc-launch:
   --grid 3 --block 2 --cooperative
   --buffer slot:int32[3] --buffer mid:int32[3] --buffer out:int32[3]
   --forall 'out[0] == 3 && out[1] == 1 && out[2] == 2'
*/
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void grid_relay(int *slot, int *mid, int *out) {
  cg::grid_group grid = cg::this_grid();
  unsigned next = (blockIdx.x + 1) % gridDim.x;
  if (threadIdx.x == 0) slot[blockIdx.x] = blockIdx.x + 1;
  grid.sync();
  if (threadIdx.x == 1) mid[blockIdx.x] = slot[next];
  grid.sync();
  if (threadIdx.x == 0) out[blockIdx.x] = mid[next];
}
