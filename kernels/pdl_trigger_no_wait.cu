// Programmatic dependent launch, the other bug: the primary writes `data`
// and then triggers (griddepcontrol.launch_dependents), and the dependent
// reads `data` without griddepcontrol.wait, taking the trigger for a
// handoff. The trigger orders no memory (PTX ISA, griddepcontrol; CUDA
// Programming Guide, Programmatic Dependent Launch): the read may see 0.
/* ptxmc-launch:
   --entry pdl_primary --grid 1 --block 1 --buffer data:int32[1]
   --dependent pdl_dependent --grid 1 --block 1 --buffer data --buffer out:int32[1]
   --forall 'out[0] == 42'
*/
__global__ void pdl_primary(int *data) {
  data[0] = 42;
  cudaTriggerProgrammaticLaunchCompletion();
}

__global__ void pdl_dependent(const int *data, int *out) {
  out[0] = data[0];
}
