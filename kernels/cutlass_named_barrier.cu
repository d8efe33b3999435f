// CUTLASS's NamedBarrier hand-over in a kernel that takes its arguments as
// CUTLASS kernels do: one `Params` struct passed by value
// (`.param .align 8 .b8 P[16]`), bound field by field with `--struct`.
// Warp 0 (the producer) writes into shared memory and arrives on the named
// barrier (`NamedBarrier::arrive`: `bar.arrive 1, 64`); warp 1 (the
// consumer) waits on it (`NamedBarrier::arrive_and_wait`: `bar.sync 1, 64`)
// and copies the value out. Correct: the phase needs both warps' arrivals
// (PTX ISA 9.7.13.1), and the producer's arrival releases its store.
/* ptxmc-launch:
   --grid 1 --block 64
   --struct 'p{0:buffer=out:int32[1]={-1}; 8:scalar=value:int32=5}'
   --forall 'out[0] == 5'
*/
#include <cutlass/arch/barrier.h>
struct Params {
  int *out;
  int value;
};
__global__ void handoff(Params p) {
  __shared__ volatile int s;
  cutlass::arch::NamedBarrier bar(
      64, cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) s = p.value;
    bar.arrive();
  } else {
    bar.arrive_and_wait();
    if (threadIdx.x == 32) p.out[0] = s;
  }
}
