/* rocsparse_check.c: exercises Debian's librocsparse0 (rocSPARSE 2.3.3, ROCm 5.3) through its
 * documented C API, with HIP provided by whatever libamdhip64.so.5 the process gets (Debian's,
 * or rocload's librocload.so under `rocload run`).
 *
 * Plain host C: no kernels here, every kernel is rocSPARSE's own (gfx1030 code object inside
 * librocsparse.so.0). Build (see build.sh):
 *   clang-19 -O2 -D__HIP_PLATFORM_AMD__ rocsparse_check.c -o rocsparse_check \
 *       -lrocsparse -lamdhip64 -lm
 *
 * Checks (every result is compared with a host computation):
 *   - rocsparse_get_version equals the headers' ROCSPARSE_VERSION_MAJOR*100000 + MINOR*100 +
 *     PATCH; rocsparse_get_git_rev answers;
 *   - CSR SpMV y = alpha*A*x + beta*y, A a random M x M matrix with ~5% non-zeros (a fixed
 *     LCG, so every run sees the same matrix; some rows are empty, one row is dense), in float
 *     and double, with rocsparse_(s|d)csrmv and info == NULL (the general kernel) and after
 *     rocsparse_(s|d)csrmv_analysis (the adaptive kernel), then rocsparse_csrmv_clear; plus
 *     y = alpha*A^T*x + beta*y (float, info == NULL). Tolerance per element: a relative
 *     bound of the sum of |terms| (1e-4 float, 1e-12 double);
 *   - conversions, compared exactly: rocsparse_csr2coo, rocsparse_coo2csr (round trip),
 *     rocsparse_scsr2csc (with its temp buffer from rocsparse_csr2csc_buffer_size);
 *   - SpMM C = alpha*A*B + beta*C with rocsparse_scsrmm, B (M x 8) and C column-major;
 *   - triangular solve L*y = alpha*x with rocsparse_scsrsv_buffer_size, _analysis and
 *     _solve, L lower triangular and strictly diagonally dominant (well conditioned), with an
 *     entry on every sub-diagonal (i, i-1) so the dependency chain is M levels deep: rocSPARSE's
 *     solve kernel spins on flags written by other work-groups. rocsparse_csrsv_zero_pivot must
 *     report no pivot; compared with host forward substitution.
 *
 * Prints `PASS <what>` / `FAIL <what>: ...` lines and exits 0 only when everything passed.
 * Optional argument: the matrix order M (default 2000).
 */
#include <hip/hip_runtime_api.h>
#include <rocsparse/rocsparse.h>

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

static const char* sp_status_name(rocsparse_status s)
{
    switch(s)
    {
    case rocsparse_status_success: return "success";
    case rocsparse_status_invalid_handle: return "invalid_handle";
    case rocsparse_status_not_implemented: return "not_implemented";
    case rocsparse_status_invalid_pointer: return "invalid_pointer";
    case rocsparse_status_invalid_size: return "invalid_size";
    case rocsparse_status_memory_error: return "memory_error";
    case rocsparse_status_internal_error: return "internal_error";
    case rocsparse_status_invalid_value: return "invalid_value";
    case rocsparse_status_arch_mismatch: return "arch_mismatch";
    case rocsparse_status_zero_pivot: return "zero_pivot";
    case rocsparse_status_not_initialized: return "not_initialized";
    case rocsparse_status_type_mismatch: return "type_mismatch";
    case rocsparse_status_requires_sorted_storage: return "requires_sorted_storage";
    }
    return "unknown";
}

/* A failed call fails `what` and makes the enclosing function return 0. */
#define HIP_OK(what, call)                                                                    \
    do                                                                                        \
    {                                                                                         \
        hipError_t e_ = (call);                                                               \
        if(e_ != hipSuccess)                                                                  \
        {                                                                                     \
            fail(what, "%s returned %d (%s)", #call, (int)e_, hipGetErrorString(e_));         \
            return 0;                                                                         \
        }                                                                                     \
    } while(0)

#define SP_OK(what, call)                                                                     \
    do                                                                                        \
    {                                                                                         \
        rocsparse_status s_ = (call);                                                         \
        if(s_ != rocsparse_status_success)                                                    \
        {                                                                                     \
            fail(what, "%s returned %d (rocsparse_status_%s)", #call, (int)s_,                \
                 sp_status_name(s_));                                                         \
            return 0;                                                                         \
        }                                                                                     \
    } while(0)

/* ------------------------------------------------------------------ deterministic input */

static uint64_t g_lcg = 0x2545F4914F6CDD1DULL;

static uint32_t lcg_next(void)
{
    /* Knuth's MMIX LCG; the high half is used. */
    g_lcg = g_lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(g_lcg >> 32);
}

/* Uniform in [-1, 1), exactly representable in float (multiples of 2^-20). */
static double lcg_value(void)
{
    return ((double)(lcg_next() >> 12) - 524288.0) / 524288.0;
}

/* A CSR matrix on the host, sorted column indices, zero-based. */
typedef struct
{
    int m, n, nnz;
    rocsparse_int* row_ptr;
    rocsparse_int* col_ind;
    double* val; /* float copies are made by rounding (values are exact in float) */
} csr_t;

static void csr_free(csr_t* a)
{
    free(a->row_ptr);
    free(a->col_ind);
    free(a->val);
}

/* Random m x n, each entry present with probability ~density; row 7 empty, row 11 dense. */
static int make_random(csr_t* a, int m, int n, double density)
{
    const uint32_t threshold = (uint32_t)(density * 4294967296.0);
    size_t cap = (size_t)((double)m * n * density * 1.2) + (size_t)n + 16;
    a->m = m;
    a->n = n;
    a->row_ptr = malloc(sizeof(rocsparse_int) * (size_t)(m + 1));
    a->col_ind = malloc(sizeof(rocsparse_int) * cap);
    a->val = malloc(sizeof(double) * cap);
    if(!a->row_ptr || !a->col_ind || !a->val)
        return 0;
    size_t k = 0;
    for(int i = 0; i < m; i++)
    {
        a->row_ptr[i] = (rocsparse_int)k;
        for(int j = 0; j < n; j++)
        {
            const int present = (i == 11 % m) || (lcg_next() < threshold && i != 7 % m);
            if(!present)
                continue;
            if(k == cap)
            {
                cap *= 2;
                a->col_ind = realloc(a->col_ind, sizeof(rocsparse_int) * cap);
                a->val = realloc(a->val, sizeof(double) * cap);
                if(!a->col_ind || !a->val)
                    return 0;
            }
            a->col_ind[k] = j;
            a->val[k] = lcg_value();
            k++;
        }
    }
    a->row_ptr[m] = (rocsparse_int)k;
    a->nnz = (int)k;
    return 1;
}

/* Lower triangular m x m: diagonal, the sub-diagonal (i, i-1), and ~extra random entries per
 * row left of the diagonal; diag = 1 + sum |off-diagonal| (strictly diagonally dominant). */
static int make_lower(csr_t* a, int m, int extra)
{
    size_t cap = (size_t)m * (size_t)(extra + 2);
    a->m = m;
    a->n = m;
    a->row_ptr = malloc(sizeof(rocsparse_int) * (size_t)(m + 1));
    a->col_ind = malloc(sizeof(rocsparse_int) * cap);
    a->val = malloc(sizeof(double) * cap);
    char* used = calloc((size_t)m, 1);
    if(!a->row_ptr || !a->col_ind || !a->val || !used)
        return 0;
    size_t k = 0;
    for(int i = 0; i < m; i++)
    {
        a->row_ptr[i] = (rocsparse_int)k;
        /* choose columns < i */
        int chosen[64];
        int nc = 0;
        if(i > 0)
            chosen[nc++] = i - 1;
        for(int e = 0; e < extra && i > 1; e++)
            chosen[nc++] = (int)(lcg_next() % (uint32_t)(i - 1));
        for(int c = 0; c < nc; c++)
            used[chosen[c]] = 1;
        double offsum = 0;
        /* emit in column order: scan the chosen set */
        for(int c = 0; c < nc; c++)
        {
            /* selection of the smallest remaining column */
            int best = -1;
            for(int d = 0; d < nc; d++)
                if(used[chosen[d]] && (best < 0 || chosen[d] < chosen[best]))
                    best = d;
            if(best < 0)
                break;
            used[chosen[best]] = 0;
            a->col_ind[k] = chosen[best];
            a->val[k] = lcg_value() * 0.5;
            offsum += fabs(a->val[k]);
            k++;
        }
        a->col_ind[k] = i;
        a->val[k] = 1.0 + offsum + 0.25 * (lcg_next() >> 31);
        /* keep the diagonal exactly representable in float */
        a->val[k] = (double)(float)a->val[k];
        k++;
    }
    a->row_ptr[m] = (rocsparse_int)k;
    a->nnz = (int)k;
    free(used);
    return 1;
}

/* ------------------------------------------------------------------ device helpers */

static void* to_device(const void* host, size_t bytes)
{
    void* d = NULL;
    if(hipMalloc(&d, bytes ? bytes : 1) != hipSuccess)
        return NULL;
    if(bytes && hipMemcpy(d, host, bytes, hipMemcpyHostToDevice) != hipSuccess)
    {
        (void)hipFree(d);
        return NULL;
    }
    return d;
}

static int from_device(const char* what, void* host, const void* device, size_t bytes)
{
    HIP_OK(what, hipDeviceSynchronize());
    HIP_OK(what, hipMemcpy(host, device, bytes, hipMemcpyDeviceToHost));
    return 1;
}

/* Device copies of a CSR matrix (values in float and in double). */
typedef struct
{
    rocsparse_int* row_ptr;
    rocsparse_int* col_ind;
    float* val_f;
    double* val_d;
} dcsr_t;

static int upload_csr(const char* what, const csr_t* a, dcsr_t* d)
{
    float* vf = malloc(sizeof(float) * (size_t)(a->nnz ? a->nnz : 1));
    if(!vf)
    {
        fail(what, "out of host memory");
        return 0;
    }
    for(int k = 0; k < a->nnz; k++)
        vf[k] = (float)a->val[k];
    d->row_ptr = to_device(a->row_ptr, sizeof(rocsparse_int) * (size_t)(a->m + 1));
    d->col_ind = to_device(a->col_ind, sizeof(rocsparse_int) * (size_t)a->nnz);
    d->val_f = to_device(vf, sizeof(float) * (size_t)a->nnz);
    d->val_d = to_device(a->val, sizeof(double) * (size_t)a->nnz);
    free(vf);
    if(!d->row_ptr || !d->col_ind || !d->val_f || !d->val_d)
    {
        fail(what, "hipMalloc/hipMemcpy of the matrix failed");
        return 0;
    }
    return 1;
}

static void free_dcsr(dcsr_t* d)
{
    (void)hipFree(d->row_ptr);
    (void)hipFree(d->col_ind);
    (void)hipFree(d->val_f);
    (void)hipFree(d->val_d);
}

/* ------------------------------------------------------------------ comparisons */

/* got[i] vs want[i] with |got - want| <= rel * scale[i] + abs_tol. */
static int compare(const char* what, const double* got, const double* want, const double* scale,
                   int n, double rel, double abs_tol)
{
    double worst = 0;
    for(int i = 0; i < n; i++)
    {
        const double err = fabs(got[i] - want[i]);
        const double tol = rel * scale[i] + abs_tol;
        if(!(err <= tol))
        {
            fail(what, "element %d is %.10g, expected %.10g (|error| %.3g > tolerance %.3g)", i,
                 got[i], want[i], err, tol);
            return 0;
        }
        if(scale[i] > 0 && err / scale[i] > worst)
            worst = err / scale[i];
    }
    printf("     worst relative error %.3g (tolerance %.1g)\n", worst, rel);
    return 1;
}

/* Host y = alpha*op(A)*x + beta*y0 in double; scale = sum of |terms|. */
static void host_spmv(const csr_t* a, int transpose, double alpha, const double* x, double beta,
                      const double* y0, double* y, double* scale)
{
    const int rows = transpose ? a->n : a->m;
    for(int i = 0; i < rows; i++)
    {
        y[i] = beta * y0[i];
        scale[i] = fabs(beta * y0[i]);
    }
    for(int i = 0; i < a->m; i++)
    {
        for(int k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
        {
            const int j = a->col_ind[k];
            if(!transpose)
            {
                y[i] += alpha * a->val[k] * x[j];
                scale[i] += fabs(alpha * a->val[k] * x[j]);
            }
            else
            {
                y[j] += alpha * a->val[k] * x[i];
                scale[j] += fabs(alpha * a->val[k] * x[i]);
            }
        }
    }
}

/* ------------------------------------------------------------------ SpMV */

static int check_spmv(rocsparse_handle h, const csr_t* a, const dcsr_t* d, int is_double,
                      int with_analysis, int transpose)
{
    char what[200];
    snprintf(what, sizeof what, "rocsparse_%ccsrmv %s%s, %d x %d, nnz %d",
             is_double ? 'd' : 's', transpose ? "y = alpha*A^T*x + beta*y" : "y = alpha*A*x + beta*y",
             with_analysis ? " after csrmv_analysis" : " (info NULL)", a->m, a->n, a->nnz);
    const int xlen = transpose ? a->m : a->n;
    const int ylen = transpose ? a->n : a->m;
    double* x = malloc(sizeof(double) * (size_t)xlen);
    double* y0 = malloc(sizeof(double) * (size_t)ylen);
    double* want = malloc(sizeof(double) * (size_t)ylen);
    double* scale = malloc(sizeof(double) * (size_t)ylen);
    double* got = malloc(sizeof(double) * (size_t)ylen);
    float* xf = malloc(sizeof(float) * (size_t)xlen);
    float* yf = malloc(sizeof(float) * (size_t)ylen);
    int ok = 0;
    void *dx = NULL, *dy = NULL;
    rocsparse_mat_descr descr = NULL;
    rocsparse_mat_info info = NULL;
    if(!x || !y0 || !want || !scale || !got || !xf || !yf)
    {
        fail(what, "out of host memory");
        goto out;
    }
    for(int i = 0; i < xlen; i++)
        xf[i] = (float)(x[i] = lcg_value());
    for(int i = 0; i < ylen; i++)
        yf[i] = (float)(y0[i] = lcg_value());
    const double alpha = 1.5, beta = -0.75;
    host_spmv(a, transpose, alpha, x, beta, y0, want, scale);

    dx = is_double ? to_device(x, sizeof(double) * (size_t)xlen)
                   : to_device(xf, sizeof(float) * (size_t)xlen);
    dy = is_double ? to_device(y0, sizeof(double) * (size_t)ylen)
                   : to_device(yf, sizeof(float) * (size_t)ylen);
    if(!dx || !dy)
    {
        fail(what, "hipMalloc/hipMemcpy failed");
        goto out;
    }
    rocsparse_status s = rocsparse_create_mat_descr(&descr);
    if(s == rocsparse_status_success && with_analysis)
        s = rocsparse_create_mat_info(&info);
    if(s != rocsparse_status_success)
    {
        fail(what, "descriptor/info creation returned %d (%s)", (int)s, sp_status_name(s));
        goto out;
    }
    const rocsparse_operation op =
        transpose ? rocsparse_operation_transpose : rocsparse_operation_none;
    if(with_analysis)
    {
        s = is_double ? rocsparse_dcsrmv_analysis(h, op, a->m, a->n, a->nnz, descr, d->val_d,
                                                  d->row_ptr, d->col_ind, info)
                      : rocsparse_scsrmv_analysis(h, op, a->m, a->n, a->nnz, descr, d->val_f,
                                                  d->row_ptr, d->col_ind, info);
        if(s != rocsparse_status_success)
        {
            fail(what, "csrmv_analysis returned %d (%s)", (int)s, sp_status_name(s));
            goto out;
        }
    }
    if(is_double)
        s = rocsparse_dcsrmv(h, op, a->m, a->n, a->nnz, &alpha, descr, d->val_d, d->row_ptr,
                             d->col_ind, info, dx, &beta, dy);
    else
    {
        const float alpha_f = (float)alpha, beta_f = (float)beta;
        s = rocsparse_scsrmv(h, op, a->m, a->n, a->nnz, &alpha_f, descr, d->val_f, d->row_ptr,
                             d->col_ind, info, dx, &beta_f, dy);
    }
    if(s != rocsparse_status_success)
    {
        fail(what, "csrmv returned %d (%s)", (int)s, sp_status_name(s));
        goto out;
    }
    if(is_double)
    {
        if(!from_device(what, got, dy, sizeof(double) * (size_t)ylen))
            goto out;
    }
    else
    {
        if(!from_device(what, yf, dy, sizeof(float) * (size_t)ylen))
            goto out;
        for(int i = 0; i < ylen; i++)
            got[i] = yf[i];
    }
    if(with_analysis)
    {
        s = rocsparse_csrmv_clear(h, info);
        if(s != rocsparse_status_success)
        {
            fail(what, "rocsparse_csrmv_clear returned %d (%s)", (int)s, sp_status_name(s));
            goto out;
        }
    }
    if(!compare(what, got, want, scale, ylen, is_double ? 1e-12 : 1e-4, 1e-30))
        goto out;
    pass(what);
    ok = 1;
out:
    if(info)
        rocsparse_destroy_mat_info(info);
    if(descr)
        rocsparse_destroy_mat_descr(descr);
    (void)hipFree(dx);
    (void)hipFree(dy);
    free(x);
    free(y0);
    free(want);
    free(scale);
    free(got);
    free(xf);
    free(yf);
    return ok;
}

/* ------------------------------------------------------------------ conversions */

static int check_csr2coo(rocsparse_handle h, const csr_t* a, const dcsr_t* d)
{
    const char* what = "rocsparse_csr2coo and rocsparse_coo2csr (exact, round trip)";
    const size_t nnz = (size_t)a->nnz;
    rocsparse_int* rows = malloc(sizeof(rocsparse_int) * (nnz ? nnz : 1));
    rocsparse_int* ptr = malloc(sizeof(rocsparse_int) * (size_t)(a->m + 1));
    rocsparse_int *drows = NULL, *dptr = NULL;
    int ok = 0;
    if(!rows || !ptr)
    {
        fail(what, "out of host memory");
        goto out;
    }
    if(hipMalloc((void**)&drows, sizeof(rocsparse_int) * (nnz ? nnz : 1)) != hipSuccess
       || hipMalloc((void**)&dptr, sizeof(rocsparse_int) * (size_t)(a->m + 1)) != hipSuccess)
    {
        fail(what, "hipMalloc failed");
        goto out;
    }
    rocsparse_status s =
        rocsparse_csr2coo(h, d->row_ptr, a->nnz, a->m, drows, rocsparse_index_base_zero);
    if(s != rocsparse_status_success)
    {
        fail(what, "rocsparse_csr2coo returned %d (%s)", (int)s, sp_status_name(s));
        goto out;
    }
    if(!from_device(what, rows, drows, sizeof(rocsparse_int) * nnz))
        goto out;
    for(int i = 0; i < a->m; i++)
        for(int k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
            if(rows[k] != i)
            {
                fail(what, "coo_row_ind[%d] is %d, expected %d", k, (int)rows[k], i);
                goto out;
            }
    s = rocsparse_coo2csr(h, drows, a->nnz, a->m, dptr, rocsparse_index_base_zero);
    if(s != rocsparse_status_success)
    {
        fail(what, "rocsparse_coo2csr returned %d (%s)", (int)s, sp_status_name(s));
        goto out;
    }
    if(!from_device(what, ptr, dptr, sizeof(rocsparse_int) * (size_t)(a->m + 1)))
        goto out;
    for(int i = 0; i <= a->m; i++)
        if(ptr[i] != a->row_ptr[i])
        {
            fail(what, "coo2csr row_ptr[%d] is %d, expected %d", i, (int)ptr[i],
                 (int)a->row_ptr[i]);
            goto out;
        }
    pass(what);
    ok = 1;
out:
    (void)hipFree(drows);
    (void)hipFree(dptr);
    free(rows);
    free(ptr);
    return ok;
}

static int check_csr2csc(rocsparse_handle h, const csr_t* a, const dcsr_t* d)
{
    const char* what = "rocsparse_scsr2csc (exact against a host transpose)";
    const size_t nnz = (size_t)a->nnz;
    rocsparse_int* want_ptr = calloc((size_t)a->n + 1, sizeof(rocsparse_int));
    rocsparse_int* want_row = malloc(sizeof(rocsparse_int) * (nnz ? nnz : 1));
    float* want_val = malloc(sizeof(float) * (nnz ? nnz : 1));
    rocsparse_int* got_ptr = malloc(sizeof(rocsparse_int) * ((size_t)a->n + 1));
    rocsparse_int* got_row = malloc(sizeof(rocsparse_int) * (nnz ? nnz : 1));
    float* got_val = malloc(sizeof(float) * (nnz ? nnz : 1));
    rocsparse_int* fill = malloc(sizeof(rocsparse_int) * ((size_t)a->n + 1));
    rocsparse_int *dptr = NULL, *drow = NULL;
    float* dval = NULL;
    void* buffer = NULL;
    int ok = 0;
    if(!want_ptr || !want_row || !want_val || !got_ptr || !got_row || !got_val || !fill)
    {
        fail(what, "out of host memory");
        goto out;
    }
    /* host counting-sort transpose: rows ascending within each column */
    for(size_t k = 0; k < nnz; k++)
        want_ptr[a->col_ind[k] + 1]++;
    for(int j = 0; j < a->n; j++)
        want_ptr[j + 1] += want_ptr[j];
    memcpy(fill, want_ptr, sizeof(rocsparse_int) * ((size_t)a->n + 1));
    for(int i = 0; i < a->m; i++)
        for(int k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
        {
            const int at = fill[a->col_ind[k]]++;
            want_row[at] = i;
            want_val[at] = (float)a->val[k];
        }

    size_t buffer_size = 0;
    rocsparse_status s = rocsparse_csr2csc_buffer_size(h, a->m, a->n, a->nnz, d->row_ptr,
                                                       d->col_ind, rocsparse_action_numeric,
                                                       &buffer_size);
    if(s != rocsparse_status_success)
    {
        fail(what, "rocsparse_csr2csc_buffer_size returned %d (%s)", (int)s, sp_status_name(s));
        goto out;
    }
    if(hipMalloc((void**)&dptr, sizeof(rocsparse_int) * ((size_t)a->n + 1)) != hipSuccess
       || hipMalloc((void**)&drow, sizeof(rocsparse_int) * (nnz ? nnz : 1)) != hipSuccess
       || hipMalloc((void**)&dval, sizeof(float) * (nnz ? nnz : 1)) != hipSuccess
       || hipMalloc(&buffer, buffer_size ? buffer_size : 4) != hipSuccess)
    {
        fail(what, "hipMalloc failed (buffer %zu bytes)", buffer_size);
        goto out;
    }
    s = rocsparse_scsr2csc(h, a->m, a->n, a->nnz, d->val_f, d->row_ptr, d->col_ind, dval, drow,
                           dptr, rocsparse_action_numeric, rocsparse_index_base_zero, buffer);
    if(s != rocsparse_status_success)
    {
        fail(what, "rocsparse_scsr2csc returned %d (%s)", (int)s, sp_status_name(s));
        goto out;
    }
    if(!from_device(what, got_ptr, dptr, sizeof(rocsparse_int) * ((size_t)a->n + 1))
       || !from_device(what, got_row, drow, sizeof(rocsparse_int) * nnz)
       || !from_device(what, got_val, dval, sizeof(float) * nnz))
        goto out;
    for(int j = 0; j <= a->n; j++)
        if(got_ptr[j] != want_ptr[j])
        {
            fail(what, "csc_col_ptr[%d] is %d, expected %d", j, (int)got_ptr[j],
                 (int)want_ptr[j]);
            goto out;
        }
    for(size_t k = 0; k < nnz; k++)
        if(got_row[k] != want_row[k] || memcmp(&got_val[k], &want_val[k], sizeof(float)) != 0)
        {
            fail(what, "entry %zu is (row %d, %.9g), expected (row %d, %.9g)", k,
                 (int)got_row[k], (double)got_val[k], (int)want_row[k], (double)want_val[k]);
            goto out;
        }
    printf("     buffer %zu bytes\n", buffer_size);
    pass(what);
    ok = 1;
out:
    (void)hipFree(dptr);
    (void)hipFree(drow);
    (void)hipFree(dval);
    (void)hipFree(buffer);
    free(want_ptr);
    free(want_row);
    free(want_val);
    free(got_ptr);
    free(got_row);
    free(got_val);
    free(fill);
    return ok;
}

/* ------------------------------------------------------------------ SpMM */

static int check_csrmm(rocsparse_handle h, const csr_t* a, const dcsr_t* d)
{
    enum { NCOLS = 8 };
    char what[160];
    snprintf(what, sizeof what, "rocsparse_scsrmm C = alpha*A*B + beta*C, B %d x %d, column-major",
             a->n, NCOLS);
    const int m = a->m, k = a->n;
    const int ldb = k + 3, ldc = m + 5; /* leading dimensions larger than the matrices */
    float* B = malloc(sizeof(float) * (size_t)ldb * NCOLS);
    float* C0 = malloc(sizeof(float) * (size_t)ldc * NCOLS);
    float* C = malloc(sizeof(float) * (size_t)ldc * NCOLS);
    double* want = malloc(sizeof(double) * (size_t)m * NCOLS);
    double* scale = malloc(sizeof(double) * (size_t)m * NCOLS);
    double* got = malloc(sizeof(double) * (size_t)m * NCOLS);
    float *dB = NULL, *dC = NULL;
    rocsparse_mat_descr descr = NULL;
    int ok = 0;
    if(!B || !C0 || !C || !want || !scale || !got)
    {
        fail(what, "out of host memory");
        goto out;
    }
    for(int i = 0; i < ldb * NCOLS; i++)
        B[i] = (float)lcg_value();
    for(int i = 0; i < ldc * NCOLS; i++)
        C0[i] = (float)lcg_value();
    const float alpha = 0.5f, beta = 2.0f;
    for(int c = 0; c < NCOLS; c++)
        for(int i = 0; i < m; i++)
        {
            double y = beta * (double)C0[i + c * ldc];
            double sc = fabs(y);
            for(int p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            {
                const double t = alpha * a->val[p] * (double)B[a->col_ind[p] + c * ldb];
                y += t;
                sc += fabs(t);
            }
            want[i + c * m] = y;
            scale[i + c * m] = sc;
        }
    dB = to_device(B, sizeof(float) * (size_t)ldb * NCOLS);
    dC = to_device(C0, sizeof(float) * (size_t)ldc * NCOLS);
    if(!dB || !dC)
    {
        fail(what, "hipMalloc/hipMemcpy failed");
        goto out;
    }
    rocsparse_status s = rocsparse_create_mat_descr(&descr);
    if(s == rocsparse_status_success)
        s = rocsparse_scsrmm(h, rocsparse_operation_none, rocsparse_operation_none, m, NCOLS, k,
                             a->nnz, &alpha, descr, d->val_f, d->row_ptr, d->col_ind, dB, ldb,
                             &beta, dC, ldc);
    if(s != rocsparse_status_success)
    {
        fail(what, "returned %d (%s)", (int)s, sp_status_name(s));
        goto out;
    }
    if(!from_device(what, C, dC, sizeof(float) * (size_t)ldc * NCOLS))
        goto out;
    for(int c = 0; c < NCOLS; c++)
    {
        for(int i = 0; i < m; i++)
            got[i + c * m] = C[i + c * ldc];
        /* rows m..ldc-1 of C are padding: they must be untouched */
        for(int i = m; i < ldc; i++)
            if(memcmp(&C[i + c * ldc], &C0[i + c * ldc], sizeof(float)) != 0)
            {
                fail(what, "padding element C[%d + %d*ldc] changed from %g to %g", i, c,
                     (double)C0[i + c * ldc], (double)C[i + c * ldc]);
                goto out;
            }
    }
    if(!compare(what, got, want, scale, m * NCOLS, 1e-4, 1e-30))
        goto out;
    pass(what);
    ok = 1;
out:
    if(descr)
        rocsparse_destroy_mat_descr(descr);
    (void)hipFree(dB);
    (void)hipFree(dC);
    free(B);
    free(C0);
    free(C);
    free(want);
    free(scale);
    free(got);
    return ok;
}

/* ------------------------------------------------------------------ triangular solve */

static int check_csrsv(rocsparse_handle h, int m)
{
    char what[200];
    csr_t L;
    memset(&L, 0, sizeof L);
    if(!make_lower(&L, m, 6))
    {
        fail("csrsv matrix", "out of host memory");
        return 0;
    }
    snprintf(what, sizeof what,
             "rocsparse_scsrsv_analysis + rocsparse_scsrsv_solve, lower %d x %d, nnz %d, %d levels",
             m, m, L.nnz, m);
    dcsr_t d;
    memset(&d, 0, sizeof d);
    double* x = malloc(sizeof(double) * (size_t)m);
    float* xf = malloc(sizeof(float) * (size_t)m);
    float* yf = malloc(sizeof(float) * (size_t)m);
    double* want = malloc(sizeof(double) * (size_t)m);
    double* got = malloc(sizeof(double) * (size_t)m);
    double* scale = malloc(sizeof(double) * (size_t)m);
    float *dx = NULL, *dy = NULL;
    void* buffer = NULL;
    rocsparse_mat_descr descr = NULL;
    rocsparse_mat_info info = NULL;
    int ok = 0;
    if(!x || !xf || !yf || !want || !got || !scale)
    {
        fail(what, "out of host memory");
        goto out;
    }
    if(!upload_csr(what, &L, &d))
        goto out;
    for(int i = 0; i < m; i++)
        xf[i] = (float)(x[i] = lcg_value());
    const float alpha = 2.0f;
    /* host forward substitution in double: L y = alpha x */
    double ymax = 0;
    for(int i = 0; i < m; i++)
    {
        double s = alpha * x[i];
        double diag = 0;
        for(int k = L.row_ptr[i]; k < L.row_ptr[i + 1]; k++)
        {
            const int j = L.col_ind[k];
            if(j < i)
                s -= (double)(float)L.val[k] * want[j];
            else if(j == i)
                diag = (double)(float)L.val[k];
        }
        want[i] = s / diag;
        if(fabs(want[i]) > ymax)
            ymax = fabs(want[i]);
    }
    for(int i = 0; i < m; i++)
        scale[i] = ymax; /* errors propagate along the chain: compare against max |y| */

    dx = to_device(xf, sizeof(float) * (size_t)m);
    if(!dx || hipMalloc((void**)&dy, sizeof(float) * (size_t)m) != hipSuccess)
    {
        fail(what, "hipMalloc/hipMemcpy failed");
        goto out;
    }
    rocsparse_status s = rocsparse_create_mat_descr(&descr);
    if(s == rocsparse_status_success)
        s = rocsparse_set_mat_fill_mode(descr, rocsparse_fill_mode_lower);
    if(s == rocsparse_status_success)
        s = rocsparse_set_mat_diag_type(descr, rocsparse_diag_type_non_unit);
    if(s == rocsparse_status_success)
        s = rocsparse_create_mat_info(&info);
    if(s != rocsparse_status_success)
    {
        fail(what, "descriptor/info setup returned %d (%s)", (int)s, sp_status_name(s));
        goto out;
    }
    size_t buffer_size = 0;
    s = rocsparse_scsrsv_buffer_size(h, rocsparse_operation_none, m, L.nnz, descr, d.val_f,
                                     d.row_ptr, d.col_ind, info, &buffer_size);
    if(s != rocsparse_status_success)
    {
        fail(what, "rocsparse_scsrsv_buffer_size returned %d (%s)", (int)s, sp_status_name(s));
        goto out;
    }
    if(hipMalloc(&buffer, buffer_size ? buffer_size : 4) != hipSuccess)
    {
        fail(what, "hipMalloc of %zu bytes failed", buffer_size);
        goto out;
    }
    s = rocsparse_scsrsv_analysis(h, rocsparse_operation_none, m, L.nnz, descr, d.val_f,
                                  d.row_ptr, d.col_ind, info, rocsparse_analysis_policy_reuse,
                                  rocsparse_solve_policy_auto, buffer);
    if(s != rocsparse_status_success)
    {
        fail(what, "rocsparse_scsrsv_analysis returned %d (%s)", (int)s, sp_status_name(s));
        goto out;
    }
    s = rocsparse_scsrsv_solve(h, rocsparse_operation_none, m, L.nnz, &alpha, descr, d.val_f,
                               d.row_ptr, d.col_ind, info, dx, dy, rocsparse_solve_policy_auto,
                               buffer);
    if(s != rocsparse_status_success)
    {
        fail(what, "rocsparse_scsrsv_solve returned %d (%s)", (int)s, sp_status_name(s));
        goto out;
    }
    rocsparse_int pivot = -2;
    s = rocsparse_csrsv_zero_pivot(h, descr, info, &pivot);
    if(s != rocsparse_status_success || pivot != -1)
    {
        fail(what, "rocsparse_csrsv_zero_pivot returned %d (%s), position %d; expected success "
                   "and -1",
             (int)s, sp_status_name(s), (int)pivot);
        goto out;
    }
    if(!from_device(what, yf, dy, sizeof(float) * (size_t)m))
        goto out;
    for(int i = 0; i < m; i++)
        got[i] = yf[i];
    s = rocsparse_csrsv_clear(h, descr, info);
    if(s != rocsparse_status_success)
    {
        fail(what, "rocsparse_csrsv_clear returned %d (%s)", (int)s, sp_status_name(s));
        goto out;
    }
    printf("     buffer %zu bytes, max |y| %.4g\n", buffer_size, ymax);
    if(!compare(what, got, want, scale, m, 1e-4, 0))
        goto out;
    pass(what);
    ok = 1;
out:
    if(info)
        rocsparse_destroy_mat_info(info);
    if(descr)
        rocsparse_destroy_mat_descr(descr);
    (void)hipFree(dx);
    (void)hipFree(dy);
    (void)hipFree(buffer);
    free_dcsr(&d);
    free(x);
    free(xf);
    free(yf);
    free(want);
    free(got);
    free(scale);
    csr_free(&L);
    return ok;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char** argv)
{
    int m = 2000;
    if(argc > 1)
    {
        m = atoi(argv[1]);
        if(m < 16 || m > 100000)
        {
            fprintf(stderr, "usage: %s [M (16..100000, default 2000)]\n", argv[0]);
            return 2;
        }
    }

    int devices = 0;
    hipError_t he = hipGetDeviceCount(&devices);
    if(he != hipSuccess || devices < 1)
    {
        fail("hipGetDeviceCount", "returned %d (%s), %d devices", (int)he,
             hipGetErrorString(he), devices);
        printf("%d passed, %d failed\n", g_passes, g_failures);
        return 1;
    }

    rocsparse_handle h;
    rocsparse_status s = rocsparse_create_handle(&h);
    if(s != rocsparse_status_success)
    {
        fail("rocsparse_create_handle", "returned %d (%s)", (int)s, sp_status_name(s));
        printf("%d passed, %d failed\n", g_passes, g_failures);
        return 1;
    }

    {
        const char* what = "rocsparse_get_version matches the headers";
        int version = 0;
        char rev[256] = {0};
        const int want =
            ROCSPARSE_VERSION_MAJOR * 100000 + ROCSPARSE_VERSION_MINOR * 100 + ROCSPARSE_VERSION_PATCH;
        s = rocsparse_get_version(h, &version);
        if(s != rocsparse_status_success || version != want)
            fail(what, "returned %d (%s), version %d, headers say %d", (int)s, sp_status_name(s),
                 version, want);
        else if((s = rocsparse_get_git_rev(h, rev)) != rocsparse_status_success)
            fail(what, "rocsparse_get_git_rev returned %d (%s)", (int)s, sp_status_name(s));
        else
        {
            printf("     rocSPARSE %d.%d.%d (%d), git %s\n", version / 100000,
                   version / 100 % 1000, version % 100, version, rev);
            pass(what);
        }
    }

    csr_t a;
    memset(&a, 0, sizeof a);
    dcsr_t d;
    memset(&d, 0, sizeof d);
    if(!make_random(&a, m, m, 0.05))
    {
        fail("matrix", "out of host memory");
        return 1;
    }
    printf("     A: %d x %d, nnz %d (%.2f%%)\n", a.m, a.n, a.nnz,
           100.0 * a.nnz / ((double)a.m * a.n));
    if(upload_csr("upload A", &a, &d))
    {
        check_spmv(h, &a, &d, 0, 0, 0);
        check_spmv(h, &a, &d, 0, 1, 0);
        check_spmv(h, &a, &d, 1, 0, 0);
        check_spmv(h, &a, &d, 1, 1, 0);
        check_spmv(h, &a, &d, 0, 0, 1);
        check_csr2coo(h, &a, &d);
        check_csr2csc(h, &a, &d);
        check_csrmm(h, &a, &d);
    }
    free_dcsr(&d);
    csr_free(&a);

    check_csrsv(h, m);

    s = rocsparse_destroy_handle(h);
    if(s != rocsparse_status_success)
        fail("rocsparse_destroy_handle", "returned %d (%s)", (int)s, sp_status_name(s));

    printf("%d passed, %d failed\n", g_passes, g_failures);
    return g_failures == 0 ? 0 : 1;
}
