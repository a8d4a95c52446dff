/* kv_bytes.c -- byte accounting of the K/V storage the runtime allocates. */
#include "kv_internal.h"

size_t llm_kv_bytes_per_token(int32_t n_layer, int32_t n_head_kv, int32_t head_dim,
                              size_t dtype_bytes) {
    if (n_layer <= 0 || n_head_kv <= 0 || head_dim <= 0 || dtype_bytes == 0) return 0;
    /* K and V: 2 * n_layer * n_head_kv * head_dim elements of dtype_bytes. */
    const size_t f[4] = {(size_t)n_layer, (size_t)n_head_kv, (size_t)head_dim, dtype_bytes};
    size_t r = 2;
    for (int i = 0; i < 4; i++) {
        if (r > SIZE_MAX / f[i]) return 0;
        r *= f[i];
    }
    return r;
}

size_t llm_kv_bytes_per_block(size_t bytes_per_token, int32_t block_size) {
    if (bytes_per_token == 0 || block_size <= 0) return 0;
    if (bytes_per_token > SIZE_MAX / (size_t)block_size) return 0;
    return bytes_per_token * (size_t)block_size;
}

int32_t llm_kv_blocks_for_budget(size_t budget_bytes, size_t bytes_per_token, int32_t block_size) {
    const size_t per_block = llm_kv_bytes_per_block(bytes_per_token, block_size);
    if (per_block == 0 || budget_bytes == 0) return 0;
    const size_t n = budget_bytes / per_block;
    return n > (size_t)INT32_MAX ? INT32_MAX : (int32_t)n;
}
