/* One process, a HIP 5 library and a HIP 7 library: one set of devices and one allocation table
 * (memory allocated through libamdhip64.so.5 is known through libamdhip64.so.7). */
#include "hip_abi.h"

int h5_device_count(void);
void* h5_alloc_filled(size_t n);
int h7_device_count(void);
int h7_check(const void* d, size_t n);

int main(void) {
  CHECK(h5_device_count() > 0 && h5_device_count() == h7_device_count(), "%d / %d devices",
        h5_device_count(), h7_device_count());
  void* d = h5_alloc_filled(200);
  CHECK(d != 0, "allocated through HIP 5");
  CHECK(h7_check(d, 200) == 0, "HIP 7 sees it: %d", h7_check(d, 200));
  printf("%s mixed\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
