/*
 * cpu/kernels/kquant_rows8_body.h -- PRIVATE: the bodies of kernels/kquant_rows8_x86_256.c, included
 * there twice: with KQ8_MADD_ACC(acc, s, p) = acc + madd(s, p) (AVX2) and = vpdpwssd
 * (AVX-VNNI, KQ8_ATTR its target attribute, KQ8_NAME adding _vnni). Include
 * nowhere else.
 */

/* Pair p (sub-blocks 2p, 2p + 1) of Q4_K block x against NA Q8_K blocks y:
 * t[j] += the scaled products, 8 int32 lanes (sr: x's scales and mins from
 * q4_k_scales_mins, broadcast to both halves). Exact integers. */
KQ8_ATTR static inline __attribute__((always_inline)) void KQ8_NAME(q4k_row_pair)(const llm_block_q4_k *x, int p,
                                                                              __m256i sr,
                                                                              const llm_block_q8_k *const *y,
                                                                              const int NA, __m256i *t) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i i0 = _mm256_set1_epi16((short)(((4 * p + 1) << 8) | (4 * p)));
    const __m256i i1 = _mm256_set1_epi16((short)(((4 * p + 3) << 8) | (4 * p + 2)));
    const __m256i q = _mm256_loadu_si256((const __m256i *)(x->qs + 32 * p));
    const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    const __m256i s0 = _mm256_shuffle_epi8(sr, i0), s1 = _mm256_shuffle_epi8(sr, i1);
    for (int j = 0; j < NA; j++) {
        const __m256i p0 = _mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)(y[j]->qs + 64 * p)));
        const __m256i p1 = _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(y[j]->qs + 64 * p + 32)));
        t[j] = KQ8_MADD_ACC(KQ8_MADD_ACC(t[j], s0, p0), s1, p1);
    }
}

/* Eight Q4_K rows by NA (1..4) Q8_K rows. NA == 4: llama.cpp's gemm order
 * (per pair p of sub-blocks, acc = fma(float(sq_p), d_x d_y, acc) and accm =
 * fma(float(mq_p), dmin_x d_y, accm)); NA < 4: its gemv order (the same with
 * the four pairs' integers summed first, one FMA each per super-block). The
 * result is acc - accm in both. */
KQ8_ATTR static inline __attribute__((always_inline)) void KQ8_NAME(q4k_8xN)(int64_t n, const char *w, size_t w_stride, const char *a,
                                                          size_t a_stride, const int NA, float *out,
                                                          size_t o_stride) {
    const int gemm = NA == 4;
    __m256 acc[4], accm[4];
    for (int j = 0; j < 4; j++) acc[j] = accm[j] = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        /* Per weight row: scales broadcast to both halves, and the mins. */
        __m256i s[8];
        __m128i mins[8];
        uint16_t dh[8], mh[8];
        for (int r = 0; r < 8; r++) {
            const llm_block_q4_k *x = (const llm_block_q4_k *)(w + (size_t)r * w_stride) + b;
            const __m256i sm = q4_k_scales_mins(x->scales);
            s[r] = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm));
            mins[r] = _mm256_extracti128_si256(sm, 1);
            dh[r] = x->d;
            mh[r] = x->dmin;
        }
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)dh));
        const __m256 mw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)mh));
        /* mn[p]: int32 lane r = (mn_r[2p], mn_r[2p + 1]) as two int16 (the
         * 4 x 8 transpose of the rows' mins pairs). */
        __m256i mn[4];
        {
            const __m256i v0 = _mm256_set_m128i(mins[4], mins[0]), v1 = _mm256_set_m128i(mins[5], mins[1]);
            const __m256i v2 = _mm256_set_m128i(mins[6], mins[2]), v3 = _mm256_set_m128i(mins[7], mins[3]);
            const __m256i t01l = _mm256_unpacklo_epi32(v0, v1), t23l = _mm256_unpacklo_epi32(v2, v3);
            const __m256i t01h = _mm256_unpackhi_epi32(v0, v1), t23h = _mm256_unpackhi_epi32(v2, v3);
            /* Lanes come out as rows 0 1 2 3 | 4 5 6 7 of each pair. */
            mn[0] = _mm256_unpacklo_epi64(t01l, t23l);
            mn[1] = _mm256_unpackhi_epi64(t01l, t23l);
            mn[2] = _mm256_unpacklo_epi64(t01h, t23h);
            mn[3] = _mm256_unpackhi_epi64(t01h, t23h);
        }
        const llm_block_q8_k *y[4];
        __m256 dd[4], dm[4];
        __m128i B[4];
        __m256i S1[4], S2[4];
        for (int j = 0; j < NA; j++) {
            y[j] = (const llm_block_q8_k *)(a + (size_t)j * a_stride) + b;
            const __m256 dy = _mm256_set1_ps(y[j]->d);
            dd[j] = _mm256_mul_ps(dw, dy);
            dm[j] = _mm256_mul_ps(mw, dy);
            /* B(k) = bsums[2k] + bsums[2k + 1]: the sums of the 8 sub-blocks. */
            const __m256i bs = _mm256_loadu_si256((const __m256i *)y[j]->bsums);
            B[j] = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
            S1[j] = S2[j] = _mm256_setzero_si256();
        }
        if (!gemm) {
            /* gemv: only each super-block's totals matter, so a row's four
             * pairs are summed in its lanes first and one tree per
             * activation row folds the 8 rows. */
            __m256i v[4][8];
            for (int r = 0; r < 8; r++) {
                const llm_block_q4_k *x = (const llm_block_q4_k *)(w + (size_t)r * w_stride) + b;
                __m256i t[4];
                for (int j = 0; j < NA; j++) t[j] = _mm256_setzero_si256();
                for (int p = 0; p < 4; p++) KQ8_NAME(q4k_row_pair)(x, p, s[r], y, NA, t);
                for (int j = 0; j < NA; j++) v[j][r] = t[j];
            }
            for (int j = 0; j < NA; j++) {
                __m256i mq = _mm256_setzero_si256();
                for (int p = 0; p < 4; p++) {
                    const __m256i bp = _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(B[j]), _mm256_set1_epi32(p));
                    mq = _mm256_add_epi32(mq, _mm256_madd_epi16(mn[p], bp));
                }
                acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(kq8_sum_rows8(v[j])), dd[j], acc[j]);
                accm[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mq), dm[j], accm[j]);
            }
            continue;
        }
        for (int p = 0; p < 4; p++) {
            /* Rows outer, two at a time: a row's pair is decoded into 4
             * registers and used for the NA activation rows at once, and
             * each two rows' lane vectors are folded by one horizontal add
             * as soon as they exist, then each four rows' by another (the
             * tree of kq8_sum_rows8 built as the rows come: integers, so
             * the same sums), which keeps about 16 vectors live where
             * holding all 8 x NA lane vectors spilled them to the stack. */
            __m256i q4[2][4];
            for (int half = 0; half < 2; half++) {
                __m256i h2[2][4];
                for (int rp = 0; rp < 2; rp++) {
                    __m256i v2[2][4];
                    for (int e = 0; e < 2; e++) {
                        const int r = 4 * half + 2 * rp + e;
                        const llm_block_q4_k *x = (const llm_block_q4_k *)(w + (size_t)r * w_stride) + b;
                        for (int j = 0; j < NA; j++) v2[e][j] = _mm256_setzero_si256();
                        KQ8_NAME(q4k_row_pair)(x, p, s[r], y, NA, v2[e]);
                    }
                    for (int j = 0; j < NA; j++) h2[rp][j] = _mm256_hadd_epi32(v2[0][j], v2[1][j]);
                }
                for (int j = 0; j < NA; j++) q4[half][j] = _mm256_hadd_epi32(h2[0][j], h2[1][j]);
            }
            for (int j = 0; j < NA; j++) {
                const __m256i sq = _mm256_add_epi32(_mm256_permute2x128_si256(q4[0][j], q4[1][j], 0x20),
                                                    _mm256_permute2x128_si256(q4[0][j], q4[1][j], 0x31));
                /* Pair p's mins products: mn_r[2p] B(2p) + mn_r[2p + 1] B(2p + 1). */
                const __m256i bp = _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(B[j]), _mm256_set1_epi32(p));
                const __m256i mq = _mm256_madd_epi16(mn[p], bp);
                if (gemm) {
                    acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sq), dd[j], acc[j]);
                    accm[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mq), dm[j], accm[j]);
                } else {
                    S1[j] = _mm256_add_epi32(S1[j], sq);
                    S2[j] = _mm256_add_epi32(S2[j], mq);
                }
            }
        }
        if (!gemm) {
            for (int j = 0; j < NA; j++) {
                acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(S1[j]), dd[j], acc[j]);
                accm[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(S2[j]), dm[j], accm[j]);
            }
        }
    }
    for (int j = 0; j < NA; j++) _mm256_storeu_ps(out + (size_t)j * o_stride, _mm256_sub_ps(acc[j], accm[j]));
}

/* Eight Q6_K rows by NA Q8_K rows in the tiled order: per super-block the
 * exact total S1 = sum_j sc_j sum_i (q_i - 32) y_i, then r = d_x * float(S1)
 * and acc = fma(r, d_y, acc) (llm__q6_k_dot_tiled; its dot4 is the same per
 * row). Rows outer: each row's groups are decoded once for the NA activation
 * rows; its NA lane vectors wait in P until the tree. */
KQ8_ATTR static inline __attribute__((always_inline)) void KQ8_NAME(q6k_8xN)(int64_t n, const char *w, size_t w_stride, const char *a,
                                                          size_t a_stride, const int NA, float *out,
                                                          size_t o_stride) {
    __m256 acc[4];
    for (int j = 0; j < 4; j++) acc[j] = _mm256_setzero_ps();
    const __m256i m4 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(0x03);
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const llm_block_q8_k *y[4];
        for (int j = 0; j < NA; j++) y[j] = (const llm_block_q8_k *)(a + (size_t)j * a_stride) + b;
        __m256i P[4][8];
        uint16_t dh[8];
        for (int r = 0; r < 8; r++) {
            const llm_block_q6_k *x = (const llm_block_q6_k *)(w + (size_t)r * w_stride) + b;
            dh[r] = x->d;
            const __m128i sc8 = _mm_loadu_si128((const __m128i *)x->scales);
            __m256i sumi[4];
            for (int j = 0; j < NA; j++) sumi[j] = _mm256_setzero_si256();
            for (int h = 0; h < 2; h++) {
                const __m256i ql0 = _mm256_loadu_si256((const __m256i *)(x->ql + 64 * h));
                const __m256i ql1 = _mm256_loadu_si256((const __m256i *)(x->ql + 64 * h + 32));
                const __m256i qh = _mm256_loadu_si256((const __m256i *)(x->qh + 32 * h));
                for (int g = 0; g < 4; g++) {
                    /* Elements 128h + 32g .. +31 as q + 32 (0..63), as q6_k_group. */
                    __m256i lo = (g & 1) ? ql1 : ql0;
                    lo = g < 2 ? _mm256_and_si256(lo, m4) : _mm256_and_si256(_mm256_srli_epi16(lo, 4), m4);
                    const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), m3);
                    const __m256i q = _mm256_or_si256(lo, _mm256_slli_epi16(hb, 4));
                    const int G = 4 * h + g;
                    const __m128i pick =
                        _mm_set_epi64x(0x0101010101010101LL * (2 * G + 1), 0x0101010101010101LL * (2 * G));
                    const __m256i sc = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc8, pick));
                    for (int j = 0; j < NA; j++) {
                        const __m256i pr = _mm256_maddubs_epi16(
                            q, _mm256_loadu_si256((const __m256i *)(y[j]->qs + 128 * h + 32 * g)));
                        sumi[j] = KQ8_MADD_ACC(sumi[j], sc, pr);
                    }
                }
            }
            /* The -32 offset: lane k loses 32 (bsums[2k] sc[2k] + bsums[2k+1] sc[2k+1]). */
            const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
            for (int j = 0; j < NA; j++) {
                const __m256i bs = _mm256_loadu_si256((const __m256i *)y[j]->bsums);
                P[j][r] = _mm256_sub_epi32(sumi[j], _mm256_slli_epi32(_mm256_madd_epi16(bs, sc16), 5));
            }
        }
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)dh));
        for (int j = 0; j < NA; j++) {
            const __m256 r = _mm256_mul_ps(dw, _mm256_cvtepi32_ps(kq8_sum_rows8(P[j])));
            acc[j] = _mm256_fmadd_ps(r, _mm256_set1_ps(y[j]->d), acc[j]);
        }
    }
    for (int j = 0; j < NA; j++) _mm256_storeu_ps(out + (size_t)j * o_stride, acc[j]);
}

