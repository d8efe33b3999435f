// Every CTA publishes a value, then the whole grid meets at cooperative
// groups' grid barrier, then another thread of each CTA reads the next
// CTA's value. Correct: `grid.sync()` is a `bar.sync`, a release
// `atom.add` on the driver's grid workspace, an acquire spin until the
// arrival count's top bit flips, and a second `bar.sync`, so the reader
// (thread 1, not the CTA's arriving thread 0) sees every CTA's write.
// Needs a cooperative launch (`cudaLaunchCooperativeKernel`): without
// `--cooperative` ptxmc refuses the workspace read, as the GPU would trap.
/* ptxmc-launch:
   --grid 3 --block 2 --cooperative
   --buffer slot:int32[3] --buffer out:int32[3]
   --forall 'out[0] == 2 && out[1] == 3 && out[2] == 1'
*/
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void grid_publish(int *slot, int *out) {
  cg::grid_group grid = cg::this_grid();
  if (threadIdx.x == 0) slot[blockIdx.x] = blockIdx.x + 1;
  grid.sync();
  if (threadIdx.x == 1) out[blockIdx.x] = slot[(blockIdx.x + 1) % gridDim.x];
}
