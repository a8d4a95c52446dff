/*
 * cuda_loader.c -- the runtime's side of the CUDA run-time module
 * (cuda/cuda_module.h). Always compiled, in C, with no CUDA header: programs
 * link no CUDA library, and a CPU run never maps one.
 *
 * The module (libllm-cuda.so) is looked up, in order: $LLM_CUDA_MODULE (a path;
 * then nothing else is tried), the running program's directory (the build
 * tree), <program dir>/../LIBDIR/llm (an installed tree), then the dynamic
 * loader's search path. "cuda" loads it or fails with the reasons; "auto" tries
 * it only where an NVIDIA driver is loaded (/proc/driver/nvidia/version) or
 * $LLM_CUDA_MODULE is set, and otherwise uses the CPU without loading anything.
 */
#define _GNU_SOURCE /* dladdr-free: readlink, dirname-free string work */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cuda/cuda.h"
#include "cuda/cuda_module.h"

#ifndef LLM_CUDA_MODULE_RELDIR
#define LLM_CUDA_MODULE_RELDIR "../lib/llm"
#endif

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_state; /* 0 not tried, 1 loaded, -1 failed */
static llm__cuda_api g_api;
static char g_why[1024]; /* why loading failed */

#ifdef LLM_CUDA_MODULE_BUILT
static void host_set_error(const char *msg) { (void)llm__err(LLM_OK, "%s", msg); }

static const llm__cuda_host g_host = {LLM_CUDA_MODULE_ABI, sizeof(struct llm_backend),
                                      sizeof(struct llm_buffer), host_set_error,
                                      llm_runtime_last_error};

static void why_add(const char *path, const char *reason) {
    size_t n = strlen(g_why);
    snprintf(g_why + n, sizeof g_why - n, "%s%s: %s", n ? "; " : "", path, reason);
}

static int try_open(const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        why_add(path, e ? e : "cannot be loaded");
        return 0;
    }
    llm__cuda_module_entry entry;
    *(void **)&entry = dlsym(h, LLM_CUDA_MODULE_ENTRY);
    if (!entry) {
        why_add(path, "not an llm CUDA module (no " LLM_CUDA_MODULE_ENTRY ")");
        dlclose(h);
        return 0;
    }
    if (entry(&g_host, &g_api) != 0) {
        why_add(path, "built from a different version of llm");
        dlclose(h);
        return 0;
    }
    return 1; /* the handle stays open for the life of the process */
}
#endif /* LLM_CUDA_MODULE_BUILT */

static int load_module(void) {
#ifndef LLM_CUDA_MODULE_BUILT
    snprintf(g_why, sizeof g_why,
             "this build has no CUDA backend (configure with LLM_CUDA=ON and nvcc installed)");
    return 0;
#else
    const char *env = getenv("LLM_CUDA_MODULE");
    if (env && *env) return try_open(env);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", exe, LLM_CUDA_MODULE_FILE);
            if (access(path, F_OK) == 0) return try_open(path);
            snprintf(path, sizeof path, "%s/%s/%s", exe, LLM_CUDA_MODULE_RELDIR, LLM_CUDA_MODULE_FILE);
            if (access(path, F_OK) == 0) return try_open(path);
        }
    }
    return try_open(LLM_CUDA_MODULE_FILE);
#endif
}

/* 1 when the module is loaded (loading it now if needed); else 0 with the
 * reasons in g_why. */
static int module(void) {
    pthread_mutex_lock(&g_lock);
    if (g_state == 0) g_state = load_module() ? 1 : -1;
    int ok = g_state == 1;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

static int driver_present(void) {
    const char *env = getenv("LLM_CUDA_MODULE");
    return (env && *env) || access("/proc/driver/nvidia/version", F_OK) == 0;
}

llm_status llm__cuda_backend_create(const llm_backend_params *p, llm_backend **out) {
    *out = NULL;
    if (!module())
        return llm__err(LLM_ERR_NOT_FOUND, "the CUDA backend module (%s) is not available: %s",
                        LLM_CUDA_MODULE_FILE, g_why);
    return g_api.backend_create(p, out);
}

llm_status llm__cuda_backend_create_auto(const llm_backend_params *p, llm_backend **out) {
    *out = NULL;
    if (!driver_present())
        return llm__err(LLM_ERR_NOT_FOUND, "no NVIDIA driver loaded: the CUDA module is not tried");
    return llm__cuda_backend_create(p, out);
}

int llm__cuda_device_count(char *msg, size_t cap) {
    if (!module()) {
        if (msg && cap) snprintf(msg, cap, "%s", g_why);
        return 0;
    }
    return g_api.device_count(msg, cap);
}

llm_status llm__cuda_fill_uniform(llm_buffer *buf, size_t offset, size_t n, float lo, float hi,
                                  uint64_t seed) {
    if (!module())
        return llm__err(LLM_ERR_NOT_FOUND, "the CUDA backend module is not available: %s", g_why);
    return g_api.fill_uniform(buf, offset, n, lo, hi, seed);
}
