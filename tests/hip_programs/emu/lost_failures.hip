// A failed launch's error belongs to the launch: worker threads launch faulting kernels on their
// own streams and check their own stream's and event's result, while another thread keeps
// resetting the device (which clears the device's sticky error and, as in HIP, destroys the
// streams the program created and frees its memory). A launch the runtime accepted must be
// reported as hipErrorIllegalAddress by the event recorded after it and by its stream's
// synchronisation, whenever the reset happened; a launch or record refused because another
// thread's fault is sticky is not a lost failure, nor is a record or synchronisation refused
// (hipErrorInvalidHandle) because a reset that had not ended when the stream was made
// destroyed it.
// Recorded, the event reports the failure whatever became of its stream.
#include "check.h"

#include <atomic>
#include <thread>
#include <vector>

__global__ void out_of_bounds(int* p, int n) { p[n + (1 << 26)] = 1; }

static const int THREADS = 6;
static const int LAUNCHES = 40;

int main() {
  int* buffer = nullptr;
  HIP_CHECK(hipMalloc(&buffer, 256));
  std::atomic<int> running{THREADS};
  std::atomic<int> accepted{0}, refused{0}, lost_event{0}, lost_stream{0};
  std::atomic<int> resets{0}, resets_begun{0}, resets_ended{0}, destroyed{0};
  char detail[160] = "";
  std::atomic<bool> noted{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < THREADS; t++) {
    workers.emplace_back([&] {
      hipEvent_t e;
      if (hipEventCreate(&e) != hipSuccess) {
        lost_event += LAUNCHES;
        running--;
        return;
      }
      for (int i = 0; i < LAUNCHES; i++) {
        // A stream per launch: through ROCr a queue that faulted stays failed. Only a reset
        // that had not ended when it was made can destroy it.
        int ended = resets_ended.load();
        hipStream_t s;
        if (hipStreamCreateWithFlags(&s, hipStreamNonBlocking) != hipSuccess) {
          lost_stream++;
          continue;
        }
        // Another thread's fault may be sticky: wait for the next reset and try again.
        bool launched = false;
        for (int attempt = 0; attempt < 1000 && !launched; attempt++) {
          int seen = resets.load();
          out_of_bounds<<<1, 1, 0, s>>>(buffer, 64);
          launched = hipGetLastError() == hipSuccess;
          if (!launched) {
            refused++;
            while (resets.load() == seen && running.load() > 0) std::this_thread::yield();
          }
        }
        if (!launched) {
          (void)hipStreamDestroy(s);
          continue;
        }
        accepted++;
        // Refused because a reset that had not ended when the stream was made destroyed it.
        auto gone = [&](hipError_t r) {
          return r == hipErrorInvalidHandle && resets_begun.load() > ended;
        };
        hipError_t recorded = hipEventRecord(e, s);
        hipError_t by_event = recorded;
        if (recorded == hipSuccess) {
          by_event = hipEventSynchronize(e);
        } else if (gone(recorded)) {
          // Refused, the stream being gone; refused because the fault is already sticky is
          // hipErrorIllegalAddress itself.
          by_event = hipErrorIllegalAddress;
        }
        hipError_t by_stream = hipStreamSynchronize(s);
        if (gone(by_stream)) {
          destroyed++;
          by_stream = hipErrorIllegalAddress;
        }
        if (by_event != hipErrorIllegalAddress) lost_event++;
        if (by_stream != hipErrorIllegalAddress) lost_stream++;
        if ((by_event != hipErrorIllegalAddress || by_stream != hipErrorIllegalAddress) &&
            !noted.exchange(true))
          snprintf(detail, sizeof detail, "event %s, stream %s", hipGetErrorName(by_event),
                   hipGetErrorName(by_stream));
        (void)hipGetLastError();
        (void)hipStreamDestroy(s);
      }
      (void)hipEventDestroy(e);
      running--;
    });
  }
  std::thread resetter([&] {
    while (running.load() > 0) {
      resets_begun++;
      if (hipDeviceReset() == hipSuccess) resets++;
      resets_ended++;
      std::this_thread::yield();
    }
  });
  for (auto& w : workers) w.join();
  resetter.join();
  HIP_CHECK(hipDeviceReset());
  (void)hipGetLastError();
  char what[360];
  snprintf(what, sizeof what,
           "%d accepted launches (%d refused, %d resets, %d streams destroyed by one): %d lost "
           "by their event, %d by their stream (first: %s)",
           accepted.load(), refused.load(), resets.load(), destroyed.load(), lost_event.load(),
           lost_stream.load(), detail);
  report("a failed launch is reported by its stream and event across device resets",
         accepted.load() > 0 && lost_event.load() == 0 && lost_stream.load() == 0, what);
  printf("%s\n", what);
  report("the resets freed the buffer", hipFree(buffer) == hipErrorInvalidValue);
  (void)hipGetLastError();
  return finish();
}
