// rocrand_check.cpp: exercises Debian's librocrand1 (rocRAND 2.10.9 as shipped with ROCm 5.3.3)
// through its documented C API, with HIP provided by whatever libamdhip64.so.5 the process gets
// (Debian's, or rocload's librocload.so under `rocload run`).
//
// Plain host C++: no kernels here, every kernel is rocRAND's own (gfx1030 code object inside
// librocrand.so.1). Build (see build.sh):
//   clang++-19 -O2 -D__HIP_PLATFORM_AMD__ rocrand_check.cpp -o rocrand_check -lrocrand -lamdhip64
//
// Checks, for PHILOX4_32_10, XORWOW and MRG32K3A:
//   - determinism: the same seed gives the same uint32 stream (re-seeding an existing
//     generator, and a brand-new generator), a different seed gives a different stream;
//   - rocrand_generate_uniform (float, (0,1]): range, mean 0.5 +- 0.005, variance 1/12 +- 0.005;
//   - rocrand_generate_normal (float, mean 0, stddev 1): mean +- 0.01, stddev 1 +- 0.01;
//   - rocrand_generate (uint32): chi-square of the top byte over 256 buckets, mean 2^31.
// Exact checks against host reference implementations:
//   - Philox4x32-10: the host implements the Random123 algorithm (Salmon et al., SC'11), checked
//     first against Random123's published known-answer vectors. rocRAND's host-API generator
//     (library/src/rng/philox4x32_10.hpp at tag rocm-5.3.3, the source of Debian's 5.3.3
//     package; its installed headers are byte-identical to that tag's) keeps ONE engine
//     `philox4x32_10_engine(seed, subsequence 0, offset)`; a launch with T threads has thread t
//     discard 4*t values and leap 4*T values per vec4 store, so element j of the output is
//     value number (offset + j) of the single stream
//         value(i) = Philox4x32_10(counter = {lo32(i/4), hi32(i/4), 0, 0},
//                                  key     = {lo32(seed), hi32(seed)})[i % 4]
//     (rocrand_philox4x32_10.h: seed -> key.x/key.y; subsequence -> counter.z/.w; offset ->
//     counter.x/.y plus the 0..3 substate). Head/tail handling for misaligned pointers and
//     lengths that are not a multiple of 4 keeps that property, and after a call the engine is
//     advanced by n, so consecutive calls continue the stream. Checked: offset 0, two
//     consecutive calls, rocrand_set_offset(5), a misaligned output pointer with an odd length,
//     and uniform floats equal to (v + 1) * 2^-32 of the same stream (within 2 ulp, as the
//     device may contract the multiply-add).
//   - Sobol32 (ROCRAND_RNG_QUASI_SOBOL32): direction numbers are computed on the host from the
//     Joe & Kuo (2008) primitive polynomials (new-joe-kuo-6.21201; dimension 1 is van der
//     Corput), compared with the table rocRAND ships (rocrand_sobol32_precomputed.h, 32 words
//     per dimension), and the sequence is computed with the Gray code:
//         x_d(i) = XOR over set bits b of (i ^ (i >> 1)) of v_d[b]
//     rocRAND (sobol32.hpp at rocm-5.3.3) writes dimension d's points offset..offset+n/D-1 to
//     data[d*(n/D) ...], and advances its offset by n/D per call. Checked for 1 and 4
//     dimensions, two consecutive calls, and ROCRAND_STATUS_LENGTH_NOT_MULTIPLE.
//
// Prints `PASS <what>` / `FAIL <what>: ...` lines and exits 0 only when everything passed.
// The environment variable ROCRAND_CHECK_N (a power of two >= 4096, default 1<<20) sets the
// size of the statistical samples; bounds widen to 8 sigma for small N.

#include <hip/hip_runtime_api.h>
#include <rocrand/rocrand.h>
#include <rocrand/rocrand_sobol32_precomputed.h>

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures = 0;
static int g_passes = 0;

static void pass(const char* what)
{
    printf("PASS %s\n", what);
    fflush(stdout);
    g_passes++;
}

static void fail(const char* what, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char* what, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: ", what);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    g_failures++;
}

static const char* rocrand_status_name(rocrand_status s)
{
    switch(s)
    {
    case ROCRAND_STATUS_SUCCESS: return "ROCRAND_STATUS_SUCCESS";
    case ROCRAND_STATUS_VERSION_MISMATCH: return "ROCRAND_STATUS_VERSION_MISMATCH";
    case ROCRAND_STATUS_NOT_CREATED: return "ROCRAND_STATUS_NOT_CREATED";
    case ROCRAND_STATUS_ALLOCATION_FAILED: return "ROCRAND_STATUS_ALLOCATION_FAILED";
    case ROCRAND_STATUS_TYPE_ERROR: return "ROCRAND_STATUS_TYPE_ERROR";
    case ROCRAND_STATUS_OUT_OF_RANGE: return "ROCRAND_STATUS_OUT_OF_RANGE";
    case ROCRAND_STATUS_LENGTH_NOT_MULTIPLE: return "ROCRAND_STATUS_LENGTH_NOT_MULTIPLE";
    case ROCRAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "ROCRAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case ROCRAND_STATUS_LAUNCH_FAILURE: return "ROCRAND_STATUS_LAUNCH_FAILURE";
    case ROCRAND_STATUS_INTERNAL_ERROR: return "ROCRAND_STATUS_INTERNAL_ERROR";
    }
    return "unknown rocrand_status";
}

// A failed API call fails `what` and makes the enclosing function return false.
#define HIP_OK(what, call)                                                                    \
    do                                                                                        \
    {                                                                                         \
        hipError_t e_ = (call);                                                               \
        if(e_ != hipSuccess)                                                                  \
        {                                                                                     \
            fail(what, "%s returned %d (%s)", #call, (int)e_, hipGetErrorString(e_));         \
            return false;                                                                     \
        }                                                                                     \
    } while(0)

#define RR_OK(what, call)                                                                     \
    do                                                                                        \
    {                                                                                         \
        rocrand_status s_ = (call);                                                           \
        if(s_ != ROCRAND_STATUS_SUCCESS)                                                      \
        {                                                                                     \
            fail(what, "%s returned %d (%s)", #call, (int)s_, rocrand_status_name(s_));       \
            return false;                                                                     \
        }                                                                                     \
    } while(0)

// ------------------------------------------------------------------ device buffers

// A device buffer of `bytes` plus its host copy.
struct Buffer
{
    void* device = nullptr;
    void* host = nullptr;
    size_t bytes = 0;

    ~Buffer()
    {
        if(device)
            (void)hipFree(device);
        free(host);
    }
};

static bool alloc(const char* what, Buffer& b, size_t bytes)
{
    b.bytes = bytes;
    b.host = calloc(1, bytes);
    if(!b.host)
    {
        fail(what, "out of host memory (%zu bytes)", bytes);
        return false;
    }
    HIP_OK(what, hipMalloc(&b.device, bytes));
    return true;
}

static bool download(const char* what, Buffer& b)
{
    HIP_OK(what, hipDeviceSynchronize());
    HIP_OK(what, hipMemcpy(b.host, b.device, b.bytes, hipMemcpyDeviceToHost));
    return true;
}

// ------------------------------------------------------------------ host Philox4x32-10

static const uint32_t PHILOX_M0 = 0xD2511F53u;
static const uint32_t PHILOX_M1 = 0xCD9E8D57u;
static const uint32_t PHILOX_W0 = 0x9E3779B9u;
static const uint32_t PHILOX_W1 = 0xBB67AE85u;

// Random123's philox4x32 with 10 rounds: out = bijection(ctr) under key.
static void philox4x32_10(const uint32_t ctr_in[4], const uint32_t key_in[2], uint32_t out[4])
{
    uint32_t c0 = ctr_in[0], c1 = ctr_in[1], c2 = ctr_in[2], c3 = ctr_in[3];
    uint32_t k0 = key_in[0], k1 = key_in[1];
    for(int round = 0; round < 10; round++)
    {
        if(round > 0)
        {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        const uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
        const uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
        const uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        const uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        const uint32_t n0 = hi1 ^ c1 ^ k0;
        const uint32_t n1 = lo1;
        const uint32_t n2 = hi0 ^ c3 ^ k1;
        const uint32_t n3 = lo0;
        c0 = n0;
        c1 = n1;
        c2 = n2;
        c3 = n3;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

// Value number `i` of rocRAND's host-API Philox stream for `seed` (subsequence 0).
struct PhiloxStream
{
    uint32_t key[2];
    uint64_t cached_block = UINT64_MAX;
    uint32_t cached[4];

    explicit PhiloxStream(uint64_t seed)
    {
        key[0] = (uint32_t)seed;
        key[1] = (uint32_t)(seed >> 32);
    }

    uint32_t operator()(uint64_t i)
    {
        const uint64_t block = i / 4;
        if(block != cached_block)
        {
            const uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), 0, 0};
            philox4x32_10(ctr, key, cached);
            cached_block = block;
        }
        return cached[i % 4];
    }
};

static void check_philox_kat()
{
    // Random123's kat_vectors, philox4x32 10: counter[4] key[2] -> output[4].
    static const uint32_t kat[3][10] = {
        {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
         0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
         0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
         0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for(int v = 0; v < 3; v++)
    {
        uint32_t out[4];
        philox4x32_10(&kat[v][0], &kat[v][4], out);
        if(memcmp(out, &kat[v][6], sizeof out) != 0)
        {
            fail("host Philox4x32-10 known-answer vectors",
                 "vector %d gives %08x %08x %08x %08x, expected %08x %08x %08x %08x",
                 v, out[0], out[1], out[2], out[3],
                 kat[v][6], kat[v][7], kat[v][8], kat[v][9]);
            return;
        }
    }
    pass("host Philox4x32-10 matches Random123 known-answer vectors");
}

// ------------------------------------------------------------------ host Sobol32

// Joe & Kuo, new-joe-kuo-6.21201, dimensions 2..8: degree s, coefficients a, initial m_1..m_s.
struct JoeKuo
{
    unsigned s;
    unsigned a;
    unsigned m[8];
};
static const JoeKuo JOE_KUO[] = {
    {1, 0, {1}},
    {2, 1, {1, 3}},
    {3, 1, {1, 3, 1}},
    {3, 2, {1, 1, 1}},
    {4, 1, {1, 1, 3, 3}},
    {4, 4, {1, 3, 5, 13}},
    {5, 2, {1, 1, 5, 5, 17}},
};
static const unsigned SOBOL_HOST_DIMS = 1 + sizeof(JOE_KUO) / sizeof(JOE_KUO[0]);

// The 32 direction numbers of dimension `d` (0-based; 0 is van der Corput).
static void sobol_directions(unsigned d, uint32_t v[32])
{
    if(d == 0)
    {
        for(unsigned k = 0; k < 32; k++)
            v[k] = 1u << (31 - k);
        return;
    }
    const JoeKuo& p = JOE_KUO[d - 1];
    for(unsigned k = 0; k < p.s && k < 32; k++)
        v[k] = p.m[k] << (31 - k);
    for(unsigned k = p.s; k < 32; k++)
    {
        uint32_t x = v[k - p.s] ^ (v[k - p.s] >> p.s);
        for(unsigned j = 1; j < p.s; j++)
        {
            // a's bits, most significant first, are the polynomial's inner coefficients.
            if((p.a >> (p.s - 1 - j)) & 1)
                x ^= v[k - j];
        }
        v[k] = x;
    }
}

static uint32_t sobol_point(const uint32_t v[32], uint32_t i)
{
    const uint32_t g = i ^ (i >> 1);
    uint32_t x = 0;
    for(unsigned b = 0; b < 32; b++)
        if(g & (1u << b))
            x ^= v[b];
    return x;
}

// ------------------------------------------------------------------ statistics

struct Moments
{
    double mean, var;
    double min, max;
};

template<typename T> static Moments moments(const T* x, size_t n)
{
    double s = 0, s2 = 0, lo = INFINITY, hi = -INFINITY;
    for(size_t i = 0; i < n; i++)
    {
        const double v = (double)x[i];
        s += v;
        s2 += v * v;
        if(v < lo)
            lo = v;
        if(v > hi)
            hi = v;
    }
    Moments m;
    m.mean = s / (double)n;
    m.var = s2 / (double)n - m.mean * m.mean;
    m.min = lo;
    m.max = hi;
    return m;
}

static size_t g_n = 1u << 20;

// max(fixed, 8 sigma)
static double bound(double fixed, double sigma)
{
    return fmax(fixed, 8.0 * sigma);
}

// ------------------------------------------------------------------ per-generator checks

struct Engine
{
    rocrand_rng_type type;
    const char* name;
};

static bool generate_u32(const char* what, rocrand_rng_type type, unsigned long long seed,
                         Buffer& out)
{
    rocrand_generator gen;
    RR_OK(what, rocrand_create_generator(&gen, type));
    rocrand_status s = rocrand_set_seed(gen, seed);
    if(s == ROCRAND_STATUS_SUCCESS)
        s = rocrand_generate(gen, (unsigned int*)out.device, out.bytes / 4);
    rocrand_destroy_generator(gen);
    if(s != ROCRAND_STATUS_SUCCESS)
    {
        fail(what, "set_seed/generate returned %d (%s)", (int)s, rocrand_status_name(s));
        return false;
    }
    return download(what, out);
}

static bool check_determinism(const Engine& e)
{
    char what[160];
    snprintf(what, sizeof what, "%s determinism (same seed same stream, other seed differs)",
             e.name);
    const size_t n = g_n;
    Buffer a, b, c, d;
    if(!alloc(what, a, n * 4) || !alloc(what, b, n * 4) || !alloc(what, c, n * 4)
       || !alloc(what, d, n * 4))
        return false;

    // a: fresh generator, seed 1234.
    if(!generate_u32(what, e.type, 1234, a))
        return false;

    // b: one generator used twice, re-seeded with 1234 in between (set_seed resets the state).
    {
        rocrand_generator gen;
        RR_OK(what, rocrand_create_generator(&gen, e.type));
        rocrand_status s = rocrand_set_seed(gen, 1234);
        if(s == ROCRAND_STATUS_SUCCESS)
            s = rocrand_generate(gen, (unsigned int*)b.device, n);
        if(s == ROCRAND_STATUS_SUCCESS)
            s = rocrand_set_seed(gen, 1234);
        if(s == ROCRAND_STATUS_SUCCESS)
            s = rocrand_generate(gen, (unsigned int*)c.device, n);
        rocrand_destroy_generator(gen);
        if(s != ROCRAND_STATUS_SUCCESS)
        {
            fail(what, "re-seeded generation returned %d (%s)", (int)s, rocrand_status_name(s));
            return false;
        }
        if(!download(what, b) || !download(what, c))
            return false;
    }

    // d: seed 5678.
    if(!generate_u32(what, e.type, 5678, d))
        return false;

    const uint32_t* A = (const uint32_t*)a.host;
    const uint32_t* B = (const uint32_t*)b.host;
    const uint32_t* C = (const uint32_t*)c.host;
    const uint32_t* D = (const uint32_t*)d.host;
    for(size_t i = 0; i < n; i++)
    {
        if(A[i] != B[i])
        {
            fail(what, "two generators seeded 1234 differ at %zu: %08x vs %08x", i, A[i], B[i]);
            return false;
        }
        if(A[i] != C[i])
        {
            fail(what, "re-seeding with 1234 gives a different value at %zu: %08x vs %08x", i,
                 A[i], C[i]);
            return false;
        }
    }
    size_t same = 0;
    for(size_t i = 0; i < n; i++)
        same += A[i] == D[i];
    // Independent streams agree in about n / 2^32 places.
    if(same > n / 1000 + 2)
    {
        fail(what, "seeds 1234 and 5678 agree in %zu of %zu values", same, n);
        return false;
    }
    // All zero (or constant) output would pass the comparisons above.
    size_t distinct_lo = 0;
    for(size_t i = 1; i < n; i++)
        distinct_lo += A[i] != A[i - 1];
    if(distinct_lo < n / 2)
    {
        fail(what, "output looks constant (%zu changes in %zu values)", distinct_lo, n);
        return false;
    }
    pass(what);
    return true;
}

static bool check_uniform_float(const Engine& e)
{
    char what[160];
    snprintf(what, sizeof what, "%s rocrand_generate_uniform float in (0,1], mean, variance",
             e.name);
    const size_t n = g_n;
    Buffer buf;
    if(!alloc(what, buf, n * sizeof(float)))
        return false;
    rocrand_generator gen;
    RR_OK(what, rocrand_create_generator(&gen, e.type));
    rocrand_status s = rocrand_set_seed(gen, 42);
    if(s == ROCRAND_STATUS_SUCCESS)
        s = rocrand_generate_uniform(gen, (float*)buf.device, n);
    rocrand_destroy_generator(gen);
    if(s != ROCRAND_STATUS_SUCCESS)
    {
        fail(what, "returned %d (%s)", (int)s, rocrand_status_name(s));
        return false;
    }
    if(!download(what, buf))
        return false;
    const float* x = (const float*)buf.host;
    for(size_t i = 0; i < n; i++)
    {
        if(!(x[i] > 0.0f && x[i] <= 1.0f))
        {
            fail(what, "value %zu is %.9g, outside (0,1]", i, (double)x[i]);
            return false;
        }
    }
    const Moments m = moments(x, n);
    const double mean_tol = bound(0.005, sqrt(1.0 / 12.0 / (double)n));
    const double var_tol = bound(0.005, sqrt(1.0 / 180.0 / (double)n));
    if(fabs(m.mean - 0.5) > mean_tol || fabs(m.var - 1.0 / 12.0) > var_tol)
    {
        fail(what, "mean %.6f (want 0.5+-%.4f), variance %.6f (want %.6f+-%.4f)", m.mean,
             mean_tol, m.var, 1.0 / 12.0, var_tol);
        return false;
    }
    printf("     mean %.6f variance %.6f min %.3g max %.9g\n", m.mean, m.var, m.min, m.max);
    pass(what);
    return true;
}

static bool check_normal_float(const Engine& e)
{
    char what[160];
    snprintf(what, sizeof what, "%s rocrand_generate_normal float mean 0 stddev 1", e.name);
    const size_t n = g_n;
    Buffer buf;
    if(!alloc(what, buf, n * sizeof(float)))
        return false;
    rocrand_generator gen;
    RR_OK(what, rocrand_create_generator(&gen, e.type));
    rocrand_status s = rocrand_set_seed(gen, 4242);
    if(s == ROCRAND_STATUS_SUCCESS)
        s = rocrand_generate_normal(gen, (float*)buf.device, n, 0.0f, 1.0f);
    rocrand_destroy_generator(gen);
    if(s != ROCRAND_STATUS_SUCCESS)
    {
        fail(what, "returned %d (%s)", (int)s, rocrand_status_name(s));
        return false;
    }
    if(!download(what, buf))
        return false;
    const float* x = (const float*)buf.host;
    size_t beyond1 = 0;
    for(size_t i = 0; i < n; i++)
    {
        if(!isfinite(x[i]))
        {
            fail(what, "value %zu is %g", i, (double)x[i]);
            return false;
        }
        beyond1 += fabsf(x[i]) > 1.0f;
    }
    const Moments m = moments(x, n);
    const double sd = sqrt(m.var);
    const double mean_tol = bound(0.01, 1.0 / sqrt((double)n));
    const double sd_tol = bound(0.01, 1.0 / sqrt(2.0 * (double)n));
    // P(|Z| > 1) = 0.3173105
    const double frac = (double)beyond1 / (double)n;
    const double frac_tol = bound(0.005, sqrt(0.3173 * 0.6827 / (double)n));
    if(fabs(m.mean) > mean_tol || fabs(sd - 1.0) > sd_tol || fabs(frac - 0.3173105) > frac_tol)
    {
        fail(what,
             "mean %.6f (want 0+-%.4f), stddev %.6f (want 1+-%.4f), P(|x|>1) %.5f (want "
             "0.31731+-%.4f)",
             m.mean, mean_tol, sd, sd_tol, frac, frac_tol);
        return false;
    }
    printf("     mean %.6f stddev %.6f P(|x|>1) %.5f\n", m.mean, sd, frac);
    pass(what);
    return true;
}

static bool check_uint_chi2(const Engine& e)
{
    char what[160];
    snprintf(what, sizeof what, "%s rocrand_generate uint32 chi-square (256 buckets) and mean",
             e.name);
    const size_t n = g_n;
    Buffer buf;
    if(!alloc(what, buf, n * 4))
        return false;
    if(!generate_u32(what, e.type, 777, buf))
        return false;
    const uint32_t* x = (const uint32_t*)buf.host;
    size_t count[256] = {0};
    size_t low_count[256] = {0};
    double sum = 0;
    for(size_t i = 0; i < n; i++)
    {
        count[x[i] >> 24]++;
        low_count[x[i] & 0xff]++;
        sum += (double)x[i];
    }
    const double expect = (double)n / 256.0;
    double chi2 = 0, chi2_low = 0;
    for(int k = 0; k < 256; k++)
    {
        chi2 += ((double)count[k] - expect) * ((double)count[k] - expect) / expect;
        chi2_low += ((double)low_count[k] - expect) * ((double)low_count[k] - expect) / expect;
    }
    const double mean = sum / (double)n / 4294967296.0; // as a fraction of 2^32
    const double mean_tol = bound(0.005, sqrt(1.0 / 12.0 / (double)n));
    // 255 degrees of freedom: mean 255, sd 22.6; [100, 420] is beyond 6.8 sigma either way.
    if(chi2 < 100 || chi2 > 420 || chi2_low < 100 || chi2_low > 420
       || fabs(mean - 0.5) > mean_tol)
    {
        fail(what,
             "chi-square of the top byte %.1f, of the low byte %.1f (want 100..420, 255 dof); "
             "mean/2^32 %.6f (want 0.5+-%.4f)",
             chi2, chi2_low, mean, mean_tol);
        return false;
    }
    printf("     chi2(top byte) %.1f chi2(low byte) %.1f mean/2^32 %.6f\n", chi2, chi2_low, mean);
    pass(what);
    return true;
}

// ------------------------------------------------------------------ Philox exact

static bool compare_philox(const char* what, const uint32_t* got, size_t n, uint64_t seed,
                           uint64_t first)
{
    PhiloxStream ref(seed);
    for(size_t j = 0; j < n; j++)
    {
        const uint32_t want = ref(first + j);
        if(got[j] != want)
        {
            fail(what,
                 "element %zu is %08x, expected %08x = Philox4x32-10(counter %llu, key "
                 "%08x:%08x) word %u",
                 j, got[j], want, (unsigned long long)((first + j) / 4), ref.key[1],
                 ref.key[0], (unsigned)((first + j) % 4));
            return false;
        }
    }
    return true;
}

static bool check_philox_exact()
{
    const uint64_t seed = 0x0123456789abcdefULL;
    const size_t n = g_n;

    {
        const char* what = "Philox4x32-10 uint32 stream equals host Philox (seed -> key, offset 0)";
        Buffer buf;
        if(!alloc(what, buf, n * 4) || !generate_u32(what, ROCRAND_RNG_PSEUDO_PHILOX4_32_10, seed, buf))
            return false;
        if(!compare_philox(what, (const uint32_t*)buf.host, n, seed, 0))
            return false;
        pass(what);
    }

    {
        const char* what = "Philox4x32-10 consecutive rocrand_generate calls continue the stream";
        Buffer buf;
        const size_t half = n / 2;
        if(!alloc(what, buf, n * 4))
            return false;
        rocrand_generator gen;
        RR_OK(what, rocrand_create_generator(&gen, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
        rocrand_status s = rocrand_set_seed(gen, seed);
        // 1001 values first (not a multiple of 4: a tail), then the rest.
        if(s == ROCRAND_STATUS_SUCCESS)
            s = rocrand_generate(gen, (unsigned int*)buf.device, 1001);
        if(s == ROCRAND_STATUS_SUCCESS)
            s = rocrand_generate(gen, (unsigned int*)buf.device + 1001, half - 1001);
        rocrand_destroy_generator(gen);
        if(s != ROCRAND_STATUS_SUCCESS)
        {
            fail(what, "returned %d (%s)", (int)s, rocrand_status_name(s));
            return false;
        }
        if(!download(what, buf))
            return false;
        if(!compare_philox(what, (const uint32_t*)buf.host, half, seed, 0))
            return false;
        pass(what);
    }

    {
        const char* what = "Philox4x32-10 rocrand_set_offset(5) starts at value 5";
        Buffer buf;
        if(!alloc(what, buf, 4096 * 4))
            return false;
        rocrand_generator gen;
        RR_OK(what, rocrand_create_generator(&gen, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
        rocrand_status s = rocrand_set_seed(gen, seed);
        if(s == ROCRAND_STATUS_SUCCESS)
            s = rocrand_set_offset(gen, 5);
        if(s == ROCRAND_STATUS_SUCCESS)
            s = rocrand_generate(gen, (unsigned int*)buf.device, 4096);
        rocrand_destroy_generator(gen);
        if(s != ROCRAND_STATUS_SUCCESS)
        {
            fail(what, "returned %d (%s)", (int)s, rocrand_status_name(s));
            return false;
        }
        if(!download(what, buf))
            return false;
        if(!compare_philox(what, (const uint32_t*)buf.host, 4096, seed, 5))
            return false;
        pass(what);
    }

    {
        const char* what = "Philox4x32-10 misaligned output pointer and odd length (head/tail)";
        Buffer buf;
        const size_t m = 100003;
        if(!alloc(what, buf, (m + 4) * 4))
            return false;
        HIP_OK(what, hipMemset(buf.device, 0xA5, buf.bytes));
        rocrand_generator gen;
        RR_OK(what, rocrand_create_generator(&gen, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
        rocrand_status s = rocrand_set_seed(gen, seed);
        if(s == ROCRAND_STATUS_SUCCESS)
            s = rocrand_generate(gen, (unsigned int*)buf.device + 1, m);
        rocrand_destroy_generator(gen);
        if(s != ROCRAND_STATUS_SUCCESS)
        {
            fail(what, "returned %d (%s)", (int)s, rocrand_status_name(s));
            return false;
        }
        if(!download(what, buf))
            return false;
        const uint32_t* x = (const uint32_t*)buf.host;
        if(x[0] != 0xA5A5A5A5u || x[m + 1] != 0xA5A5A5A5u)
        {
            fail(what, "wrote outside the requested range: before %08x after %08x", x[0],
                 x[m + 1]);
            return false;
        }
        if(!compare_philox(what, x + 1, m, seed, 0))
            return false;
        pass(what);
    }

    {
        const char* what = "Philox4x32-10 uniform float equals (v+1)*2^-32 of the same stream";
        const size_t m = 1u << 16;
        Buffer buf;
        if(!alloc(what, buf, m * sizeof(float)))
            return false;
        rocrand_generator gen;
        RR_OK(what, rocrand_create_generator(&gen, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
        rocrand_status s = rocrand_set_seed(gen, seed);
        if(s == ROCRAND_STATUS_SUCCESS)
            s = rocrand_generate_uniform(gen, (float*)buf.device, m);
        rocrand_destroy_generator(gen);
        if(s != ROCRAND_STATUS_SUCCESS)
        {
            fail(what, "returned %d (%s)", (int)s, rocrand_status_name(s));
            return false;
        }
        if(!download(what, buf))
            return false;
        const float* x = (const float*)buf.host;
        PhiloxStream ref(seed);
        for(size_t j = 0; j < m; j++)
        {
            // rocrand_uniform.h: ROCRAND_2POW32_INV + v * ROCRAND_2POW32_INV in float.
            const double want = ((double)ref(j) + 1.0) * (1.0 / 4294967296.0);
            const double ulp = ldexp(1.0, ilogb(want) - 23);
            if(fabs((double)x[j] - want) > 2.0 * ulp + 1e-9 * want)
            {
                fail(what, "element %zu is %.9g, expected %.9g (from %08x)", j, (double)x[j],
                     want, ref(j));
                return false;
            }
        }
        pass(what);
    }
    return true;
}

// ------------------------------------------------------------------ Sobol32 exact

static bool check_sobol_directions()
{
    const char* what = "Sobol32 direction numbers: rocRAND's table equals Joe-Kuo (dims 1..8)";
    for(unsigned d = 0; d < SOBOL_HOST_DIMS; d++)
    {
        uint32_t v[32];
        sobol_directions(d, v);
        for(unsigned k = 0; k < 32; k++)
        {
            if(v[k] != h_sobol32_direction_vectors[d * 32 + k])
            {
                fail(what, "dimension %u, v[%u]: host %08x, rocrand_sobol32_precomputed.h %08x",
                     d + 1, k, v[k], h_sobol32_direction_vectors[d * 32 + k]);
                return false;
            }
        }
    }
    pass(what);
    return true;
}

// Generates `calls` batches of `per_call` values each (per_call a multiple of dims) and
// compares with the host Gray-code Sobol sequence.
static bool sobol_run(const char* what, unsigned dims, size_t per_call, unsigned calls)
{
    Buffer buf;
    if(!alloc(what, buf, per_call * calls * 4))
        return false;
    rocrand_generator gen;
    RR_OK(what, rocrand_create_generator(&gen, ROCRAND_RNG_QUASI_SOBOL32));
    rocrand_status s = rocrand_set_quasi_random_generator_dimensions(gen, dims);
    for(unsigned c = 0; c < calls && s == ROCRAND_STATUS_SUCCESS; c++)
        s = rocrand_generate(gen, (unsigned int*)buf.device + c * per_call, per_call);
    rocrand_destroy_generator(gen);
    if(s != ROCRAND_STATUS_SUCCESS)
    {
        fail(what, "returned %d (%s)", (int)s, rocrand_status_name(s));
        return false;
    }
    if(!download(what, buf))
        return false;
    const uint32_t* x = (const uint32_t*)buf.host;
    const size_t points = per_call / dims;
    for(unsigned d = 0; d < dims; d++)
    {
        uint32_t v[32];
        sobol_directions(d, v);
        for(unsigned c = 0; c < calls; c++)
        {
            for(size_t p = 0; p < points; p++)
            {
                const uint32_t i = (uint32_t)(c * points + p); // point index in the sequence
                const uint32_t want = sobol_point(v, i);
                const uint32_t got = x[c * per_call + d * points + p];
                if(got != want)
                {
                    fail(what, "call %u, dimension %u, point %u: got %08x, expected %08x", c,
                         d + 1, i, got, want);
                    return false;
                }
            }
        }
    }
    pass(what);
    return true;
}

static bool check_sobol()
{
    bool ok = true;
    const size_t n = g_n < (1u << 18) ? g_n : (1u << 18);
    ok &= sobol_run("Sobol32 1 dimension uint32 equals host Gray-code Sobol", 1, n, 1);
    ok &= sobol_run("Sobol32 1 dimension, two calls continue the sequence", 1, 10000, 2);
    ok &= sobol_run("Sobol32 4 dimensions uint32 (dimension-major layout) equal host Sobol", 4,
                    4 * 12345, 2);

    {
        const char* what = "Sobol32 rejects a length that is not a multiple of the dimensions";
        Buffer buf;
        if(!alloc(what, buf, 4 * 1024))
            return false;
        rocrand_generator gen;
        RR_OK(what, rocrand_create_generator(&gen, ROCRAND_RNG_QUASI_SOBOL32));
        rocrand_status s = rocrand_set_quasi_random_generator_dimensions(gen, 3);
        if(s == ROCRAND_STATUS_SUCCESS)
            s = rocrand_generate(gen, (unsigned int*)buf.device, 1000);
        rocrand_destroy_generator(gen);
        if(s != ROCRAND_STATUS_LENGTH_NOT_MULTIPLE)
        {
            fail(what, "returned %d (%s), expected ROCRAND_STATUS_LENGTH_NOT_MULTIPLE", (int)s,
                 rocrand_status_name(s));
            ok = false;
        }
        else
            pass(what);
    }

    {
        const char* what = "Sobol32 uniform float equals (x+1)*2^-32 of the host sequence";
        const size_t m = 1u << 14;
        Buffer buf;
        if(!alloc(what, buf, m * sizeof(float)))
            return false;
        rocrand_generator gen;
        RR_OK(what, rocrand_create_generator(&gen, ROCRAND_RNG_QUASI_SOBOL32));
        rocrand_status s = rocrand_generate_uniform(gen, (float*)buf.device, m);
        rocrand_destroy_generator(gen);
        if(s != ROCRAND_STATUS_SUCCESS)
        {
            fail(what, "returned %d (%s)", (int)s, rocrand_status_name(s));
            return false;
        }
        if(!download(what, buf))
            return false;
        uint32_t v[32];
        sobol_directions(0, v);
        const float* x = (const float*)buf.host;
        for(size_t j = 0; j < m; j++)
        {
            const double want = ((double)sobol_point(v, (uint32_t)j) + 1.0) / 4294967296.0;
            const double ulp = ldexp(1.0, ilogb(want) - 23);
            if(fabs((double)x[j] - want) > 2.0 * ulp + 1e-9 * want)
            {
                fail(what, "element %zu is %.9g, expected %.9g", j, (double)x[j], want);
                return false;
            }
        }
        pass(what);
    }
    return ok;
}

// ------------------------------------------------------------------ main

int main(void)
{
    const char* env = getenv("ROCRAND_CHECK_N");
    if(env && *env)
    {
        const unsigned long long v = strtoull(env, nullptr, 0);
        if(v < 4096 || (v & (v - 1)) != 0)
        {
            fprintf(stderr, "ROCRAND_CHECK_N must be a power of two >= 4096\n");
            return 2;
        }
        g_n = (size_t)v;
    }

    int version = 0;
    rocrand_status vs = rocrand_get_version(&version);
    if(vs != ROCRAND_STATUS_SUCCESS || version != ROCRAND_VERSION)
        fail("rocrand_get_version", "status %d, version %d (headers say %d)", (int)vs, version,
             ROCRAND_VERSION);
    else
    {
        printf("     rocRAND version %d, N = %zu\n", version, g_n);
        pass("rocrand_get_version matches the headers");
    }

    // Host-only self-checks of the references.
    check_philox_kat();
    check_sobol_directions();

    int devices = 0;
    hipError_t he = hipGetDeviceCount(&devices);
    if(he != hipSuccess || devices < 1)
    {
        fail("hipGetDeviceCount", "returned %d (%s), %d devices", (int)he, hipGetErrorString(he),
             devices);
        printf("%d passed, %d failed\n", g_passes, g_failures);
        return 1;
    }

    const Engine engines[] = {
        {ROCRAND_RNG_PSEUDO_PHILOX4_32_10, "Philox4x32-10"},
        {ROCRAND_RNG_PSEUDO_XORWOW, "XORWOW"},
        {ROCRAND_RNG_PSEUDO_MRG32K3A, "MRG32k3a"},
    };
    for(const Engine& e : engines)
    {
        check_determinism(e);
        check_uniform_float(e);
        check_normal_float(e);
        check_uint_chi2(e);
    }

    check_philox_exact();
    check_sobol();

    printf("%d passed, %d failed\n", g_passes, g_failures);
    return g_failures == 0 ? 0 : 1;
}
