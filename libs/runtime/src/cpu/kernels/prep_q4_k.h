/*
 * cpu/kernels/prep_q4_k.h -- PRIVATE: the layout of a Q4_K weight prepared
 * at load, shared by its 512-bit product (prep_q4_k_x86_512.c) and its
 * 256-bit one (prep_kquant_x86_256.c). Include after prep_kquant.h.
 */
#ifndef LLM_CPU_KERNELS_PREP_Q4_K_H
#define LLM_CPU_KERNELS_PREP_Q4_K_H

/* A Q4_K weight prepared at load (kernels.h prep): per group of 16 rows, per
 * super-block (Q4KR_SB bytes, 64-byte aligned):
 *   qs [4 pairs p][8 chunks k][16 rows][4 bytes]: bytes 32p + 4k .. + 3 of
 *      row r's qs (low nibbles: sub-block 2p, high: 2p + 1), still packed;
 *   scales [3 dwords][16 rows][4 bytes]: row r's 12 packed scale bytes;
 *   d, dmin [16 rows] fp16 each.
 * 144 bytes per row and super-block, as the file. The product decodes the
 * 6-bit scales and mins of 16 rows at once (q4_k_scales_mins' dword
 * formulas, lane r on row r's dwords, then a byte shuffle per sub-block:
 * about 22 instructions per super-block for all the activation rows; a
 * layout with them decoded, 4 bytes per row more, left the 1B Q4_K_M's
 * peak RSS 7 MiB above its file + KV + 64 MiB). It is q4k_dotx4_zmm's
 * product on one 64-byte load per chunk, so four activation rows give
 * llama.cpp's gemm order; fewer
 * take its gemv order (GEMV: the four pairs' exact sums added first, then
 * one fma per super-block for the scales and one for the mins, as
 * llm__q4_k_dot_repack_gemv), which is what the matmul runs for the last
 * n % 4 rows. */
#define Q4KR_SB 2304
#define Q4KR_SC 2048
#define Q4KR_D 2240
/* The prefetch distance of a streaming pass (as Q40R_PF, kernels/q4_0_x86_256.c). */
#define Q4KR_PF 9472

static const struct kr_layout q4kr_layout = {
    sizeof(llm_block_q4_k),
    Q4KR_SB,
    {{offsetof(llm_block_q4_k, qs), 0, 32, 4},
     {offsetof(llm_block_q4_k, scales), Q4KR_SC, 3, 4},
     {offsetof(llm_block_q4_k, d), Q4KR_D, 1, 2},
     {offsetof(llm_block_q4_k, dmin), Q4KR_D + 32, 1, 2}}};
KR_LAYOUT_FNS(q4kr, q4kr_layout)

#endif
