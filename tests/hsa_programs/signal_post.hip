// Device code that updates an HSA signal as hostcall doorbells do: __ockl_hsa_signal_add (which
// posts the signal's event to its mailbox and sends an interrupt when the signal has one).
// interrupt_signal.c loads it through the HSA runtime; tests/hsa_soft.rs builds it.
#include <hip/hip_runtime.h>
struct hsa_signal_s { unsigned long handle; };
extern "C" __device__ void __ockl_hsa_signal_add(hsa_signal_s sig, long value, int order);
extern "C" __global__ void post(unsigned long signal, long value) {
  if (threadIdx.x == 0 && blockIdx.x == 0) __ockl_hsa_signal_add(hsa_signal_s{signal}, value, 3);
}
