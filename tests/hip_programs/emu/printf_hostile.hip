// Device printf with hostile format strings: formats a kernel reads at run time from a buffer
// the host fills, and literal ones, that ask the host for arguments never passed (positional
// arguments, %n, %m, %S, %Lf, absurd widths, missing arguments, a truncated conversion). The
// runtime must print a marker for each and keep running. Lines starting "printf " are legitimate
// conversions (literal and run-time formats); each must equal the host printf's "expect " line.
// A kernel also opens 64 x 20 messages and never ends them.
#include "check.h"

#pragma clang diagnostic ignored "-Wformat"
#pragma clang diagnostic ignored "-Wformat-security"
#pragma clang diagnostic ignored "-Wformat-extra-args"
#pragma clang diagnostic ignored "-Wformat-invalid-specifier"
#pragma clang diagnostic ignored "-Wformat-nonliteral"

// Run-time formats: one thread per format, each given the same three arguments.
constexpr int STRIDE = 64;
static const char* const RUNTIME_FORMATS[] = {
    "printf R0 %lld %.3f %d|\n",
    "printf R1 %llx %e %c|\n",
    "printf R2 %20lld %-+10.2f %05d|\n",
    "printf R3 %lli %a %hhx|\n",
    "hostile 1 %3$s|\n",
    "hostile 2 %8$s|\n",
    "hostile 3 %2$p|\n",
    "hostile 4 %***d|\n",
    "hostile 5 %Lf|\n",
    "hostile 6 %m|\n",
    "hostile 7 %S|\n",
    "hostile 8 %n|\n",
    "hostile 9 %99999999d|\n",
    "hostile 10 %lld %f %d %d %s|\n",
    "hostile 11 %C|\n",
    "hostile 12 %.99999999f|\n",
};
constexpr int NFORMATS = sizeof(RUNTIME_FORMATS) / sizeof(RUNTIME_FORMATS[0]);

__global__ void runtime_formats(const char* fmts, int n, long long a, double d, int c) {
  int i = threadIdx.x;
  if (i < n) printf(fmts + i * STRIDE, a, d, c);
}

// A format that ends inside a conversion.
__global__ void truncated(const char* fmt) { printf(fmt); }

// Hostile literal formats (clang passes the arguments it sees; the host must still refuse).
__global__ void literal_hostile(int* sink) {
  printf("hostile L1 %3$s|\n", "x", "y", "z");
  printf("hostile L2 %n|\n", sink);
  printf("hostile L3 %2$p|\n");
  printf("hostile L4 %d %d|\n", 5);
}

// Opens printf messages and never ends them (ockl's entry point, as a kernel may call it): the
// runtime drops them when the dispatch ends (the test counts them in its debug log).
extern "C" __device__ unsigned long __ockl_printf_begin(unsigned long);
constexpr int NEVER_ENDED = 20;
__global__ void never_ended() {
  for (int i = 0; i < NEVER_ENDED; i++) __ockl_printf_begin(0);
}

// Legitimate literal formats over values the host passes, so it can print the same.
__global__ void legit(int n, long long big, unsigned long long ubig, double x, double inf,
                      double nan_, double nz, double sub, const char* s, const int* p) {
  printf("printf A %5d|%-5i|%+.3d|%05x|%#o|%hhd|%hu|%ld|%llu|%lld|%zx|%c|%#X|\n", n, n, n, n, n,
         n, n, big, ubig, big, (size_t)ubig, 'A' + n % 26, n);
  printf("printf B %f|%.0f|%#.0f|%e|%.10E|%g|%G|%#g|%a|%A|%.3a|%10.4f|%-12e|%+g|\n", x, x, x, x, x,
         x, x, x, x, x, x, x, x, x);
  printf("printf C %f|%e|%g|%a|%F|%E|%G|%A|%08.2f|%-8g|%e|\n", inf, -inf, nan_, -nan_, nz, nz, nz,
         nz, inf, nan_, -nz);
  printf("printf D %g|%e|%a|%.17g|%.0e|%.3g|%#.3g|\n", sub, sub, sub, x * 1e300, x, x * 1e-7,
         x * 1e5);
  printf("printf E %s|%.2s|%10s|%-10s|%p|%p|%%|%5c|%-3c|\n", s, s, s, s, p, (void*)0, 'z', 'y');
}

int main() {
  char* dfmts;
  HIP_CHECK(hipMalloc(&dfmts, NFORMATS * STRIDE));
  char host_fmts[NFORMATS * STRIDE] = {};
  for (int i = 0; i < NFORMATS; i++) {
    if (strlen(RUNTIME_FORMATS[i]) >= STRIDE) {
      report("format fits", false, RUNTIME_FORMATS[i]);
      return finish();
    }
    strcpy(host_fmts + i * STRIDE, RUNTIME_FORMATS[i]);
  }
  HIP_CHECK(hipMemcpy(dfmts, host_fmts, sizeof host_fmts, hipMemcpyHostToDevice));
  char* dtrunc;
  HIP_CHECK(hipMalloc(&dtrunc, 16));
  HIP_CHECK(hipMemcpy(dtrunc, "hostile T %", 12, hipMemcpyHostToDevice));
  char* dstr;
  HIP_CHECK(hipMalloc(&dstr, 8));
  HIP_CHECK(hipMemcpy(dstr, "words", 6, hipMemcpyHostToDevice));
  int* dsink;
  HIP_CHECK(hipMalloc(&dsink, sizeof(int)));

  const long long a = -1234567890123LL;
  const double d = 3.25;
  const int c = 77;
  const int n = 200;
  const long long big = -9223372036854775807LL - 1;
  const unsigned long long ubig = 18446744073709551615ULL;
  const double x = 1234.5678;
  const double inf = INFINITY, nan_ = NAN, nz = -0.0, sub = 4.9406564584124654e-324;

  fflush(stdout);
  runtime_formats<<<1, NFORMATS>>>(dfmts, NFORMATS, a, d, c);
  HIP_CHECK(hipDeviceSynchronize());
  literal_hostile<<<1, 1>>>(dsink);
  HIP_CHECK(hipDeviceSynchronize());
  never_ended<<<1, 64>>>();
  HIP_CHECK(hipDeviceSynchronize());
  legit<<<1, 1>>>(n, big, ubig, x, inf, nan_, nz, sub, dstr, dsink);
  HIP_CHECK(hipDeviceSynchronize());
  truncated<<<1, 1>>>(dtrunc);
  HIP_CHECK(hipDeviceSynchronize());
  fflush(stdout);
  printf("\n");

  // What the host's printf prints for the legitimate lines.
  for (int i = 0; i < NFORMATS; i++)
    if (strncmp(RUNTIME_FORMATS[i], "printf ", 7) == 0) {
      char expect[STRIDE + 8];
      snprintf(expect, sizeof expect, "expect %s", RUNTIME_FORMATS[i] + 7);
      printf(expect, a, d, c);
    }
  printf("expect A %5d|%-5i|%+.3d|%05x|%#o|%hhd|%hu|%ld|%llu|%lld|%zx|%c|%#X|\n", n, n, n, n, n,
         n, n, (long)big, ubig, big, (size_t)ubig, 'A' + n % 26, n);
  printf("expect B %f|%.0f|%#.0f|%e|%.10E|%g|%G|%#g|%a|%A|%.3a|%10.4f|%-12e|%+g|\n", x, x, x, x, x,
         x, x, x, x, x, x, x, x, x);
  printf("expect C %f|%e|%g|%a|%F|%E|%G|%A|%08.2f|%-8g|%e|\n", inf, -inf, nan_, -nan_, nz, nz, nz,
         nz, inf, nan_, -nz);
  printf("expect D %g|%e|%a|%.17g|%.0e|%.3g|%#.3g|\n", sub, sub, sub, x * 1e300, x, x * 1e-7,
         x * 1e5);
  printf("expect E %s|%.2s|%10s|%-10s|%p|%p|%%|%5c|%-3c|\n", "words", "words", "words", "words",
         (void*)dsink, (void*)0, 'z', 'y');
  HIP_CHECK(hipFree(dfmts));
  HIP_CHECK(hipFree(dtrunc));
  HIP_CHECK(hipFree(dstr));
  HIP_CHECK(hipFree(dsink));
  return finish();
}
