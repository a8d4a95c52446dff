/*
 * cpu/backend_cpu.c -- the CPU backend: creation, kernel selection, host
 * buffers, and the function table.
 */
#define _DEFAULT_SOURCE /* _SC_NPROCESSORS_ONLN */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/cpu.h"

/* Physical cores: online CPUs divided by the SMT width of cpu0. */
static int physical_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) {
        return 1;
    }
    int smt = 1;
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "r");
    if (f) {
        char line[128];
        if (fgets(line, sizeof(line), f)) {
            /* "0,64" or "0-1" lists the siblings; count them. */
            int a, b, cnt = 0;
            char *p = line;
            while (*p) {
                int used = 0;
                if (sscanf(p, "%d-%d%n", &a, &b, &used) == 2 && used > 0) {
                    cnt += b - a + 1;
                } else if (sscanf(p, "%d%n", &a, &used) == 1 && used > 0) {
                    cnt += 1;
                } else {
                    break;
                }
                p += used;
                if (*p == ',') {
                    p++;
                } else {
                    break;
                }
            }
            smt = cnt > 0 ? cnt : 1;
        }
        fclose(f);
    }
    long cores = n / smt;
    return cores < 1 ? 1 : (int)cores;
}

static void cpu_destroy(llm_backend *be) {
    llm__cpu *c = llm__cpu_of(be);
    if (c) {
        llm__threadpool_free(c->tp);
        if (c->tscratch) {
            for (int i = 0; i < be->n_threads; i++) {
                free(c->tscratch[i]);
            }
        }
        free(c->tscratch);
        free(c->act);
        free(c->act_sc);
        free(c->kv_offs);
        free(c->gemm_w);
        free(c->gemm_x);
        free(c->moe);
        free(c->pack);
        for (int i = 0; i < c->n_prep; i++) free(c->prep[i].data);
        free(c->prep);
        free(c->act_ys);
        free(c->rowtmp);
        free(c);
    }
    free(be);
}

static llm_status cpu_buf_alloc(llm_backend *be, size_t size, void **data) {
    (void)be;
    *data = llm__cpu_zalloc(size);
    if (!*data) {
        return llm__err(LLM_ERR_NO_MEMORY, "cpu: cannot allocate %zu bytes", size);
    }
    return LLM_OK;
}

static llm_status cpu_buf_wrap(llm_backend *be, const void *host, size_t size, void **data,
                               int *wrapped) {
    (void)be;
    (void)size;
    *data = (void *)(uintptr_t)host; /* used in place; ops never write wrapped buffers */
    *wrapped = 1;
    return LLM_OK;
}

static void cpu_buf_free(llm_backend *be, void *data, int wrapped) {
    (void)be;
    if (!wrapped) {
        free(data);
    }
}

static llm_status cpu_buf_write(llm_backend *be, void *data, size_t off, const void *src, size_t n) {
    (void)be;
    memcpy((char *)data + off, src, n);
    return LLM_OK;
}

static llm_status cpu_buf_read(llm_backend *be, const void *data, size_t off, void *dst, size_t n) {
    (void)be;
    memcpy(dst, (const char *)data + off, n);
    return LLM_OK;
}

static llm_status cpu_buf_copy(llm_backend *be, void *dst, size_t dst_off, const void *src,
                               size_t src_off, size_t n) {
    (void)be;
    memmove((char *)dst + dst_off, (const char *)src + src_off, n);
    return LLM_OK;
}

static llm_status cpu_buf_clear(llm_backend *be, void *data, size_t size) {
    (void)be;
    memset(data, 0, size);
    return LLM_OK;
}

static int cpu_supports(const llm_backend *be, llm_op op, llm_dtype dtype) {
    const llm__cpu *c = (const llm__cpu *)be->impl;
    switch (op) {
    case LLM_OP_MATMUL:
        return c->k.dot[dtype] != NULL;
    case LLM_OP_GET_ROWS:
        return 1; /* every known type has a reference dequantizer */
    case LLM_OP_KV_WRITE:
    case LLM_OP_ATTENTION:
        return llm__cpu_kv_type_ok(dtype) && c->k.dot[dtype] != NULL;
    default:
        return dtype == LLM_DTYPE_F32;
    }
}

static const llm__backend_iface g_cpu_iface = {
    .name = "cpu",
    .destroy = cpu_destroy,
    .synchronize = NULL,
    .supports = cpu_supports,
    .buf_alloc = cpu_buf_alloc,
    .buf_wrap = cpu_buf_wrap,
    .buf_free = cpu_buf_free,
    .buf_write = cpu_buf_write,
    .buf_read = cpu_buf_read,
    .buf_clear = cpu_buf_clear,
    .get_rows = llm__cpu_get_rows,
    .matmul = llm__cpu_matmul,
    .rms_norm = llm__cpu_rms_norm,
    .rope = llm__cpu_rope,
    .swiglu = llm__cpu_swiglu,
    .add = llm__cpu_add,
    .mul = llm__cpu_mul,
    .scale = llm__cpu_scale,
    .softmax = llm__cpu_softmax,
    .kv_write = llm__cpu_kv_write,
    .attention = llm__cpu_attention,
    .argmax = llm__cpu_argmax,
    .geglu = llm__cpu_geglu,
};

llm_status llm__cpu_backend_create(const llm_backend_params *p, llm_backend **out) {
    *out = NULL;
    int level;
    switch (p->kernels) {
    case LLM_KERNELS_AUTO: level = LLM__ISA_ALL; break;
    case LLM_KERNELS_SCALAR: level = LLM__ISA_SCALAR; break;
    case LLM_KERNELS_AVX2: level = LLM__ISA_AVX2; break;
    case LLM_KERNELS_AVX_VNNI: level = LLM__ISA_AVX_VNNI; break;
    default: return llm__err(LLM_ERR_INVALID_ARG, "cpu: unknown kernel selection %d", (int)p->kernels);
    }
    const char *env = p->kernels == LLM_KERNELS_AUTO ? getenv("LLM_CPU_KERNELS") : NULL;
    if (env && *env) {
        static const struct {
            const char *name;
            int level;
        } names[] = {{"auto", LLM__ISA_ALL},
                     {"avx-vnni", LLM__ISA_AVX_VNNI},
                     {"avx2", LLM__ISA_AVX2},
                     {"scalar", LLM__ISA_SCALAR}};
        int found = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0] && !found; i++) {
            if (strcmp(env, names[i].name) == 0) level = names[i].level, found = 1;
        }
        if (!found) {
            return llm__err(LLM_ERR_INVALID_ARG, "cpu: LLM_CPU_KERNELS=%.40s: expected auto, avx2, avx-vnni or scalar",
                            env);
        }
    }
    llm_backend *be = calloc(1, sizeof(*be));
    llm__cpu *c = calloc(1, sizeof(*c));
    if (!be || !c) {
        free(be);
        free(c);
        return llm__err(LLM_ERR_NO_MEMORY, "cpu: out of memory creating the backend");
    }
    be->iface = &g_cpu_iface;
    be->ext.buf_copy = cpu_buf_copy;
    be->ext.layer_norm = llm__cpu_layer_norm;
    be->ext.gelu = llm__cpu_gelu;
    be->ext.attention_full = llm__cpu_attention_full;
    be->ext.matmul_invariant = llm__cpu_matmul_invariant;
    be->ext.unary = llm__cpu_unary;
    be->ext.ssm_conv = llm__cpu_ssm_conv;
    be->ext.gated_delta = llm__cpu_gated_delta;
    be->ext.matmul_id = llm__cpu_matmul_id;
    be->ext.moe_topk = llm__cpu_moe_topk;
    be->ext.moe_sum = llm__cpu_moe_sum;
    be->ext.prepare_weight = llm__cpu_prepare_weight;
    be->ext.buf_forget = llm__cpu_forget_buffer;
    be->impl = c;
    be->params = *p;
    be->n_threads = p->n_threads > 0 ? p->n_threads : physical_cores();
    if (be->n_threads > 256) {
        be->n_threads = 256;
    }
    llm__cpu_kernels_scalar(&c->k);
    const unsigned cpu = llm__cpu_features_upto(level);
    if (cpu & LLM__CPU_AVX2) llm__cpu_kernels_x86(&c->k, cpu);
    snprintf(be->kernels, sizeof(be->kernels), "%s", c->k.desc);
    c->tscratch = calloc((size_t)be->n_threads, sizeof(float *));
    if (!c->tscratch || llm__threadpool_create(be->n_threads, &c->tp) != LLM_OK) {
        int nt = be->n_threads;
        cpu_destroy(be);
        return llm__err(LLM_ERR_NO_MEMORY, "cpu: cannot start %d threads", nt);
    }
    *out = be;
    return LLM_OK;
}
