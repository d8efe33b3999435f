// Programmatic dependent launch (cudaLaunchKernelEx with
// cudaLaunchAttributeProgrammaticStreamSerialization): two CTAs of the
// primary kernel each write their element of `data` and trigger the
// dependent (griddepcontrol.launch_dependents); the dependent kernel waits
// for the primary (griddepcontrol.wait) before it reads `data`: correct, the
// wait waits for the whole primary grid and makes its writes visible.
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
  cudaGridDependencySynchronize();
  out[0] = data[0];
  out[1] = data[1];
}
