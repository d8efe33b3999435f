// Message passing through device functions that nvcc keeps as `.func`s
// (`__noinline__`): CTA 0 publishes with a fence between the data and the
// flag, CTA 1 spins on the flag, fences and reads. The calls are inlined
// by ptxmc before lowering (docs/kernels.md, "Device functions"). Correct.
/* ptxmc-launch:
   --grid 2 --buffer data:int32[1] --buffer flag:int32[1] --buffer out:int32[1]
   --forall 'out[0] == 42'
*/
__device__ __noinline__ void publish(int *data, volatile int *flag, int v) {
  data[0] = v;
  __threadfence();
  *flag = 1;
}
__device__ __noinline__ int wait_read(int *data, volatile int *flag) {
  while (*flag == 0) {}
  __threadfence();
  return data[0];
}
__global__ void mp_calls(int *data, int *flag, int *out) {
  if (blockIdx.x == 0) publish(data, flag, 42);
  else out[0] = wait_read(data, flag);
}
