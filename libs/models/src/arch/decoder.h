/*
 * arch/decoder.h -- PRIVATE: the blocks every decoder family shares
 * (arch/decoder.c, llama.cpp's llama-graph.cpp in spirit): the common
 * hyper-parameter keys, the tensor tables a family extends, the load-time
 * checks and RoPE, attention over the paged cache, the gated feed-forward
 * and the final norm plus LM head. A family file (llama.c, gemma3.c, ...)
 * calls these; decoder.c calls no family, so calls go one way.
 */
#ifndef LLM_ARCH_DECODER_H
#define LLM_ARCH_DECODER_H

#include "arch/arch_internal.h"

/* ------------------------------------------------------------ hparams -- */

/* The hyper-parameters of GGUF keys "<arch>.embedding_length" etc. (and the
 * tokenizer's special ids), then llm__hparams_finish. rope_type is set
 * NORMAL (llama.cpp's converter permuted q/k for llama); a family whose q/k
 * are not permuted sets NEOX after the call. */
llm_status llm__decoder_hparams_gguf(const char *arch, llm_model_hparams *hp, const llm_model_desc *d,
                                     const llm_gguf *g);
/* The same from a Hugging Face config.json (LlamaConfig's keys, rope_scaling);
 * rope_type NEOX (unpermuted HF q/k pair with rotate_half). */
llm_status llm__decoder_hparams_hf(llm_model_hparams *hp, const llm_model_desc *d, json_t *cfg);

/* ------------------------------------------------------- tensor tables -- */

/* token_embd, output_norm, output (absent: tied), and per layer attn_norm,
 * attn_q, attn_k, attn_v, attn_output, with their HF names (Llama's). */
extern const llm__tensor_table llm__decoder_attn_tensors;
/* llm__decoder_attn_tensors extended by the dense SwiGLU feed-forward:
 * ffn_norm (HF post_attention_layernorm), ffn_gate, ffn_up, ffn_down. */
extern const llm__tensor_table llm__decoder_tensors;

/* ------------------------------------------------------------- loading -- */

/* After the table: the hyper-parameter checks every decoder needs, the tied
 * LM head (output = token_embd when the file has no output.weight), and RoPE
 * (n_rot dims, rope_type, Llama 3.1 frequency factors or llama3 / linear
 * scaling). Errors through llm__net_err. */
llm_status llm__decoder_load(llm_net *net);

/* ------------------------------------------------------------- forward -- */

/* y += bias, when the file has that bias (one F32 add per element, as
 * ggml_add does, so the logits stay bit-identical to llama.cpp's). */
#define BIAS(y, bias)                                                                              \
    do {                                                                                           \
        if (llm__has(&(bias))) OP(llm_op_add(be, &(y), &(y), &(bias)));                            \
    } while (0)

/* Attention of layer l: per sequence of the batch, writes k, v (the arena's
 * k / v slots) into the paged cache (a window layer of a split storage
 * through the window group's table) and attends q (the q slot) into the att
 * slot, with ap's scale and window. */
llm_status llm__attend(llm_net *net, llm_net_kv *kv, const llm_net_batch *b, uint32_t l, const llm_attn_params *ap);

/* The gated feed-forward of layer l for the batch's n rows, from the
 * arena's xn slot [n][E] into its tmp slot [n][E]:
 *     tmp = (act(xn . Wg^T + bg) * (xn . Wu^T + bu)) . Wd^T + bd
 * act = silu (SwiGLU; gelu 0) or GELU (GEGLU, gelu 1), each bias only when
 * the layer has it. In runs of llm__ffn_run rows through the gate / up slots
 * (an arch whose FFN goes through here sets ffn_chunked): the same bits as
 * one pass, since every op is per row and each row meets the matmul kernel
 * it meets in one pass.
 * Taps "ffn_gate_b" / "ffn_up_b" (with those biases) and "ffn_swiglu" or
 * "ffn_geglu", once per run. */
llm_status llm__ffn_glu(llm_net *net, const llm_net_batch *b, uint32_t l, int gelu);

/* The end of a decoder's forward: the final RMSNorm (over every row when all
 * rows or hidden states are wanted, else over the last row of each
 * sequence) and the LM head in chunks of LLM__LOGITS_CHUNK rows, into
 * b->logits / b->hidden. x: the residual stream [n][E]; xn: an [n][E]
 * scratch view. */
llm_status llm__decoder_output(llm_net *net, const llm_net_batch *b, const llm_tensor *x, const llm_tensor *xn,
                               float eps);

#endif
