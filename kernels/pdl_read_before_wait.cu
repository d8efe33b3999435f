// Programmatic dependent launch, the bug: the dependent kernel reads the
// primary's result before griddepcontrol.wait (a preamble that should only
// have touched its own memory). The dependent may start as soon as every
// primary CTA has triggered (or at once: the trigger is a hint), so its read
// of data[0] may see the initial 0; data[1], read after the wait, is 43.
/* ptxmc-launch:
   --entry pdl_primary --grid 2 --block 1 --buffer data:int32[2]
   --dependent pdl_dependent --grid 1 --block 1 --buffer data --buffer out:int32[2]
   --forall 'out[0] == 42 /\ out[1] == 43'
*/
__global__ void pdl_primary(int *data) {
  data[blockIdx.x] = 42 + blockIdx.x;
  cudaTriggerProgrammaticLaunchCompletion();
}

__global__ void pdl_dependent(const int *data, int *out) {
  int early = data[0];
  cudaGridDependencySynchronize();
  out[0] = early;
  out[1] = data[1];
}
