/* kernel_census.c: a rocload tool library that takes a census of the device code a program
 * loads and runs.
 *
 * For every code object librocload.so loads it records the URI, load base and size, and every
 * symbol the code object defines (kernels, device functions, variables: kind, name, device
 * address, size); it counts the dispatches of every kernel (and their completions, failures and
 * execution time as reported by dispatch_end). When the process exits it prints the census,
 * one code object after another, to stderr, or to the file named by the environment variable
 * KERNEL_CENSUS_OUT ("%p" in the name is replaced by the process id).
 *
 * Build (from the repository root; only include/rocload.h is needed, no link against
 * librocload.so: the tool's references are resolved in the process that loads it):
 *
 *     clang-19 -shared -fPIC -O2 -Wall -I include -o kernel_census.so \
 *         examples/tools/kernel_census.c -lpthread
 *
 * Use:
 *
 *     rocload run --tool ./kernel_census.so PROGRAM [ARGS...]
 *     KERNEL_CENSUS_OUT=census-%p.txt rocload run --tool ./kernel_census.so PROGRAM
 *
 * (`--tool` sets ROCLOAD_TOOLS; librocload.so dlopens the library at the first HIP call and
 * calls rocload_tool_init below.)
 *
 * Interface (include/rocload.h): rocload_tool_register copies a rocload_tool_t whose
 * struct_size says how much of the struct this tool was compiled with; before it returns, the
 * tool gets code_object_loaded for everything already loaded. Callbacks come from runtime
 * threads (loads on the thread that caused them, dispatch_begin on the launching thread,
 * dispatch_end on the queue's thread), so all state here is behind one mutex; everything a
 * callback receives, strings included, lives only for the call and is copied.
 */
#include "rocload.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Resolved in the process at load time (librocload.so exports it); weak so that loading this
 * library somewhere without librocload.so is reported instead of failing in the loader. */
extern int rocload_tool_register(const rocload_tool_t* tool, uint64_t* id) __attribute__((weak));

typedef struct symbol_rec
{
    int kind;
    char* name;
    char* demangled; /* NULL when not mangled */
    uint64_t address;
    uint64_t size;
    uint64_t code_address;
    /* kernels only */
    uint64_t dispatches; /* dispatch_begin */
    uint64_t completed;  /* dispatch_end with hipSuccess */
    uint64_t failed;     /* dispatch_end with an error */
    uint64_t total_ns;   /* summed duration_ns of completed dispatches */
    uint64_t instructions; /* summed wave instructions (software agent; 0 on ROCr) */
} symbol_rec;

typedef struct code_object_rec
{
    uint64_t id;
    int device;
    char* uri;
    uint64_t load_base;
    uint64_t load_size;
    uint64_t load_delta;
    size_t symbol_count;
    symbol_rec* symbols; /* sorted by address */
    int unloaded;
    struct code_object_rec* next;
} code_object_rec;

/* Dispatches of kernels no loaded code object defines (should not happen; kept visible). */
typedef struct stray_rec
{
    int device;
    uint64_t kernel_object;
    char* name;
    uint64_t dispatches, completed, failed, total_ns, instructions;
    struct stray_rec* next;
} stray_rec;

/* (device, kernel descriptor address) -> kernel symbol, for the loaded code objects. */
typedef struct
{
    uint64_t kernel_object;
    int device;
    symbol_rec* symbol; /* NULL: empty slot */
} slot_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static code_object_rec* g_objects = NULL; /* most recent first */
static code_object_rec** g_tail = &g_objects; /* append, so the census is in load order */
static stray_rec* g_strays = NULL;
static slot_t* g_table = NULL;
static size_t g_table_cap = 0; /* power of two */
static size_t g_table_used = 0;
static int g_registered = 0;
static int g_printed = 0;
static uint64_t g_tool_id = 0;

static char* dup_str(const char* s)
{
    if(!s)
        return NULL;
    const size_t n = strlen(s) + 1;
    char* d = malloc(n);
    if(d)
        memcpy(d, s, n);
    return d;
}

/* ---------------------------------------------------------------- lookup table */

static size_t slot_hash(int device, uint64_t kernel_object)
{
    uint64_t h = kernel_object ^ ((uint64_t)(unsigned)device * 0x9E3779B97F4A7C15ull);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (size_t)h;
}

static void table_put(slot_t* table, size_t cap, int device, uint64_t kernel_object,
                      symbol_rec* symbol)
{
    size_t i = slot_hash(device, kernel_object) & (cap - 1);
    while(table[i].symbol
          && !(table[i].device == device && table[i].kernel_object == kernel_object))
        i = (i + 1) & (cap - 1);
    if(!table[i].symbol)
        g_table_used++;
    table[i].device = device;
    table[i].kernel_object = kernel_object;
    table[i].symbol = symbol;
}

static symbol_rec* table_get(int device, uint64_t kernel_object)
{
    if(!g_table)
        return NULL;
    size_t i = slot_hash(device, kernel_object) & (g_table_cap - 1);
    while(g_table[i].symbol)
    {
        if(g_table[i].device == device && g_table[i].kernel_object == kernel_object)
            return g_table[i].symbol;
        i = (i + 1) & (g_table_cap - 1);
    }
    return NULL;
}

/* Rebuilds the table from the loaded code objects (after an unload, or to grow it). */
static void table_rebuild(size_t min_entries)
{
    size_t live = 0;
    for(code_object_rec* c = g_objects; c; c = c->next)
        if(!c->unloaded)
            for(size_t k = 0; k < c->symbol_count; k++)
                live += c->symbols[k].kind == ROCLOAD_SYMBOL_KERNEL;
    if(live < min_entries)
        live = min_entries;
    size_t cap = 64;
    while(cap < live * 2 + 1)
        cap *= 2;
    slot_t* table = calloc(cap, sizeof(slot_t));
    if(!table)
        return; /* keep the old table: counts of new kernels go to the stray list */
    free(g_table);
    g_table = table;
    g_table_cap = cap;
    g_table_used = 0;
    for(code_object_rec* c = g_objects; c; c = c->next)
        if(!c->unloaded)
            for(size_t k = 0; k < c->symbol_count; k++)
                if(c->symbols[k].kind == ROCLOAD_SYMBOL_KERNEL)
                    table_put(g_table, g_table_cap, c->device, c->symbols[k].address,
                              &c->symbols[k]);
}

/* ---------------------------------------------------------------- callbacks */

static int by_address(const void* a, const void* b)
{
    const symbol_rec* x = a;
    const symbol_rec* y = b;
    if(x->address != y->address)
        return x->address < y->address ? -1 : 1;
    return x->kind - y->kind;
}

static void on_loaded(const rocload_code_object_t* co, void* user_data)
{
    (void)user_data;
    code_object_rec* rec = calloc(1, sizeof *rec);
    if(!rec)
        return;
    rec->id = co->id;
    rec->device = co->device;
    rec->uri = dup_str(co->uri ? co->uri : "");
    rec->load_base = co->load_base;
    rec->load_size = co->load_size;
    rec->load_delta = co->load_delta;
    rec->symbols = calloc(co->symbol_count ? co->symbol_count : 1, sizeof(symbol_rec));
    if(rec->symbols)
    {
        for(size_t k = 0; k < co->symbol_count; k++)
        {
            const rocload_symbol_t* s = &co->symbols[k];
            symbol_rec* r = &rec->symbols[rec->symbol_count++];
            r->kind = s->kind;
            r->name = dup_str(s->name ? s->name : "");
            r->demangled = dup_str(s->demangled_name);
            r->address = s->address;
            r->size = s->size;
            r->code_address = s->code_address;
        }
        qsort(rec->symbols, rec->symbol_count, sizeof(symbol_rec), by_address);
    }

    pthread_mutex_lock(&g_lock);
    *g_tail = rec;
    g_tail = &rec->next;
    size_t kernels = 0;
    for(size_t k = 0; k < rec->symbol_count; k++)
        kernels += rec->symbols[k].kind == ROCLOAD_SYMBOL_KERNEL;
    if(!g_table || (g_table_used + kernels) * 2 + 1 > g_table_cap)
        table_rebuild(g_table_used + kernels);
    else
        for(size_t k = 0; k < rec->symbol_count; k++)
            if(rec->symbols[k].kind == ROCLOAD_SYMBOL_KERNEL)
                table_put(g_table, g_table_cap, rec->device, rec->symbols[k].address,
                          &rec->symbols[k]);
    pthread_mutex_unlock(&g_lock);
}

static void on_unloaded(const rocload_code_object_t* co, void* user_data)
{
    (void)user_data;
    pthread_mutex_lock(&g_lock);
    for(code_object_rec* c = g_objects; c; c = c->next)
    {
        if(c->id == co->id && !c->unloaded)
        {
            c->unloaded = 1;
            /* Its addresses may be reused by a later load: drop them from the lookup. */
            table_rebuild(0);
            break;
        }
    }
    pthread_mutex_unlock(&g_lock);
}

/* Caller holds the lock. */
static stray_rec* stray_for(const rocload_dispatch_t* d)
{
    for(stray_rec* s = g_strays; s; s = s->next)
        if(s->device == d->device && s->kernel_object == d->kernel_object)
            return s;
    stray_rec* s = calloc(1, sizeof *s);
    if(!s)
        return NULL;
    s->device = d->device;
    s->kernel_object = d->kernel_object;
    s->name = dup_str(d->demangled_name ? d->demangled_name
                                        : (d->kernel_name ? d->kernel_name : "?"));
    s->next = g_strays;
    g_strays = s;
    return s;
}

static void on_dispatch_begin(const rocload_dispatch_t* d, void* user_data)
{
    (void)user_data;
    pthread_mutex_lock(&g_lock);
    symbol_rec* s = table_get(d->device, d->kernel_object);
    if(s)
        s->dispatches++;
    else
    {
        stray_rec* st = stray_for(d);
        if(st)
            st->dispatches++;
    }
    pthread_mutex_unlock(&g_lock);
}

static void on_dispatch_end(const rocload_dispatch_t* d, const rocload_dispatch_result_t* r,
                            void* user_data)
{
    (void)user_data;
    pthread_mutex_lock(&g_lock);
    symbol_rec* s = table_get(d->device, d->kernel_object);
    uint64_t *completed, *failed, *total_ns, *instructions;
    stray_rec* st = NULL;
    if(s)
    {
        completed = &s->completed;
        failed = &s->failed;
        total_ns = &s->total_ns;
        instructions = &s->instructions;
    }
    else if((st = stray_for(d)) != NULL)
    {
        completed = &st->completed;
        failed = &st->failed;
        total_ns = &st->total_ns;
        instructions = &st->instructions;
    }
    else
    {
        pthread_mutex_unlock(&g_lock);
        return;
    }
    if(r->status == 0)
    {
        (*completed)++;
        *total_ns += r->duration_ns;
        *instructions += r->instructions;
    }
    else
        (*failed)++;
    pthread_mutex_unlock(&g_lock);
}

/* ---------------------------------------------------------------- report */

static const char* kind_name(int kind)
{
    switch(kind)
    {
    case ROCLOAD_SYMBOL_KERNEL: return "kernel";
    case ROCLOAD_SYMBOL_FUNCTION: return "function";
    case ROCLOAD_SYMBOL_VARIABLE: return "variable";
    }
    return "other";
}

/* KERNEL_CENSUS_OUT with "%p" replaced by the pid; NULL for stderr. */
static FILE* open_output(int* is_file)
{
    *is_file = 0;
    const char* spec = getenv("KERNEL_CENSUS_OUT");
    if(!spec || !*spec)
        return stderr;
    char path[4096];
    size_t o = 0;
    for(const char* p = spec; *p && o + 24 < sizeof path; p++)
    {
        if(p[0] == '%' && p[1] == 'p')
        {
            o += (size_t)snprintf(path + o, sizeof path - o, "%ld", (long)getpid());
            p++;
        }
        else
            path[o++] = *p;
    }
    path[o] = '\0';
    FILE* f = fopen(path, "w");
    if(!f)
    {
        fprintf(stderr, "kernel_census: cannot open KERNEL_CENSUS_OUT=%s; writing to stderr\n",
                path);
        return stderr;
    }
    *is_file = 1;
    return f;
}

static void print_census(void)
{
    pthread_mutex_lock(&g_lock);
    if(g_printed || !g_registered)
    {
        pthread_mutex_unlock(&g_lock);
        return;
    }
    g_printed = 1;

    size_t objects = 0, symbols = 0, kernels_run = 0;
    uint64_t dispatches = 0;
    for(code_object_rec* c = g_objects; c; c = c->next)
    {
        objects++;
        symbols += c->symbol_count;
        for(size_t k = 0; k < c->symbol_count; k++)
        {
            dispatches += c->symbols[k].dispatches;
            kernels_run += c->symbols[k].dispatches > 0;
        }
    }
    for(stray_rec* s = g_strays; s; s = s->next)
        dispatches += s->dispatches;

    int is_file;
    FILE* f = open_output(&is_file);
    fprintf(f,
            "== kernel census (pid %ld): %zu code object%s, %zu symbols, %zu kernel%s "
            "dispatched, %" PRIu64 " dispatch%s ==\n",
            (long)getpid(), objects, objects == 1 ? "" : "s", symbols, kernels_run,
            kernels_run == 1 ? "" : "s", dispatches, dispatches == 1 ? "" : "es");
    for(code_object_rec* c = g_objects; c; c = c->next)
    {
        fprintf(f, "code object %" PRIu64 " on device %d%s\n", c->id, c->device,
                c->unloaded ? " (unloaded)" : "");
        fprintf(f, "  uri   %s\n", c->uri ? c->uri : "");
        fprintf(f, "  base  0x%016" PRIx64 "  size 0x%" PRIx64 " (%" PRIu64
                   " bytes)  delta 0x%" PRIx64 "\n",
                c->load_base, c->load_size, c->load_size, c->load_delta);
        fprintf(f, "  %-8s  %-18s  %10s  %s\n", "kind", "address", "size", "name");
        for(size_t k = 0; k < c->symbol_count; k++)
        {
            const symbol_rec* s = &c->symbols[k];
            fprintf(f, "  %-8s  0x%016" PRIx64 "  %10" PRIu64 "  %s", kind_name(s->kind),
                    s->address, s->size, s->name);
            if(s->demangled)
                fprintf(f, "  [%s]", s->demangled);
            fputc('\n', f);
            if(s->kind == ROCLOAD_SYMBOL_KERNEL)
            {
                fprintf(f, "  %-8s  %-18s  %10s    code 0x%016" PRIx64 "  dispatches %" PRIu64,
                        "", "", "", s->code_address, s->dispatches);
                if(s->dispatches || s->completed || s->failed)
                    fprintf(f,
                            " (completed %" PRIu64 ", failed %" PRIu64 ", %.3f ms total",
                            s->completed, s->failed, (double)s->total_ns / 1e6);
                if(s->instructions)
                    fprintf(f, ", %" PRIu64 " wave instructions, %.1f M/s", s->instructions,
                            s->total_ns ? (double)s->instructions * 1e3 / (double)s->total_ns
                                        : 0.0);
                if(s->dispatches || s->completed || s->failed)
                    fputc(')', f);
                fputc('\n', f);
            }
        }
    }
    if(g_strays)
    {
        fprintf(f, "dispatches of kernels no loaded code object defines:\n");
        for(stray_rec* s = g_strays; s; s = s->next)
            fprintf(f,
                    "  device %d  kernel_object 0x%016" PRIx64 "  %s  dispatches %" PRIu64
                    " (completed %" PRIu64 ", failed %" PRIu64 ", %.3f ms total)\n",
                    s->device, s->kernel_object, s->name, s->dispatches, s->completed,
                    s->failed, (double)s->total_ns / 1e6);
    }
    fprintf(f, "== end of kernel census ==\n");
    fflush(f);
    if(is_file)
        fclose(f);
    pthread_mutex_unlock(&g_lock);
}

static void census_at_exit(void)
{
    print_census();
}

/* Fallback for exits that skip atexit handlers registered by a dlopened library (the census
 * is printed once either way). */
__attribute__((destructor)) static void census_destructor(void)
{
    print_census();
}

/* ---------------------------------------------------------------- entry point */

__attribute__((visibility("default"))) int rocload_tool_init(void)
{
    pthread_mutex_lock(&g_lock);
    const int already = g_registered;
    pthread_mutex_unlock(&g_lock);
    if(already)
        return 0;
    if(!rocload_tool_register)
    {
        fprintf(stderr, "kernel_census: rocload_tool_register not found; is this process "
                        "running on librocload.so (rocload run --tool ...)?\n");
        return 1;
    }

    rocload_tool_t tool;
    memset(&tool, 0, sizeof tool);
    tool.struct_size = sizeof(rocload_tool_t);
    tool.user_data = NULL;
    tool.code_object_loaded = on_loaded;
    tool.code_object_unloaded = on_unloaded;
    tool.dispatch_begin = on_dispatch_begin;
    tool.dispatch_end = on_dispatch_end;

    /* Mark registered first: the loaded callbacks for code objects already loaded arrive
     * before rocload_tool_register returns. */
    pthread_mutex_lock(&g_lock);
    g_registered = 1;
    pthread_mutex_unlock(&g_lock);
    uint64_t id = 0;
    const int status = rocload_tool_register(&tool, &id);
    if(status != 0)
    {
        fprintf(stderr, "kernel_census: rocload_tool_register failed with %d\n", status);
        pthread_mutex_lock(&g_lock);
        g_registered = 0;
        pthread_mutex_unlock(&g_lock);
        return status;
    }
    pthread_mutex_lock(&g_lock);
    g_tool_id = id;
    pthread_mutex_unlock(&g_lock);
    atexit(census_at_exit);
    return 0;
}
