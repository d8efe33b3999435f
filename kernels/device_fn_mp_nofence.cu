// The bug of device_fn_mp.cu: the reader's function has no fence after the
// spin, so its read of the data may be older than the flag (out[0] == 0).
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
  return data[0];
}
__global__ void mp_calls(int *data, int *flag, int *out) {
  if (blockIdx.x == 0) publish(data, flag, 42);
  else out[0] = wait_read(data, flag);
}
