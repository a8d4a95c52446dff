/* The engine's one batch loop: every forward pass of the engine, for
 * sessions (prefill, decode) and for embeddings, goes through
 * llm__compute(). A job is one KV sequence's next tokens; the loop appends
 * them to the sequence in forward passes of at most the model's n_batch
 * tokens (copy-on-write of a shared tail block first), runs the forward, and
 * commits each pass to the sequence, so a failure or a cancel leaves the
 * sequence at the last whole pass.
 *
 * Today each pass holds one job's tokens. The job struct is what a
 * scheduler packs (rows of several sequences in one llm_net_batch), so the
 * server's continuous batching extends this loop, not the sessions. */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

llm_status llm__compute(llm_model *m, llm__job *job, char *err) {
    const size_t width = job->what == LLM__FWD_HIDDEN_ALL ? (size_t)m->info.n_embd : (size_t)m->info.n_vocab;
    const bool all = job->what != LLM__FWD_LOGITS_LAST;
    const int32_t pos0 = llm__kvs_len(m, &job->seq);
    float *straddle = NULL; /* one pass's rows when it holds rows before rows_from */
    llm_status st = LLM_OK;
    job->done = 0;
    while (job->done < job->n) {
        const int32_t t0 = job->done, nb = job->n - t0 < m->n_batch ? job->n - t0 : m->n_batch;
        /* Where this pass's rows go: straight into the caller's rows, or
         * through a scratch when the pass starts before rows_from. */
        float *rows = NULL;
        if (all && t0 < job->rows_from) {
            if (!straddle) straddle = malloc((size_t)nb * width * sizeof *straddle);
            if (!straddle) {
                st = llm__fail(err, LLM_ERR_NO_MEMORY, "out of memory for one pass's rows");
                break;
            }
            rows = straddle;
        } else if (all) {
            rows = job->rows + (size_t)(t0 - job->rows_from) * width;
        }
        /* Tokens given to the pool go into the prefix index; NULL never does. */
        st = llm__kvs_append(m, &job->seq, job->index ? job->tokens + t0 : NULL, nb, err);
        if (st != LLM_OK) break;
        char ferr[LLM__ERR_CAP];
        llm__fwd_seq fs;
        llm__kvs_tables(m, &job->seq, &fs);
        for (int32_t i = 0; i < nb; i++) m->pos[i] = pos0 + t0 + i;
        st = llm__fwd_run(m->fwd, job->tokens + t0, m->pos, nb, &fs, job->what, all ? rows : job->last,
                          job->cancel, ferr, sizeof ferr);
        if (st != LLM_OK) {
            llm__kvs_keep(m, &job->seq, pos0 + t0);
            llm__fail(err, st, "%s", ferr);
            break;
        }
        if (rows == straddle && all) {
            int32_t skip = job->rows_from - t0; /* rows before rows_from are not wanted */
            if (nb > skip) memcpy(job->rows, straddle + (size_t)skip * width, (size_t)(nb - skip) * width * sizeof *rows);
        }
        if (all && job->last && t0 + nb == job->n)
            memcpy(job->last, rows + (size_t)(nb - 1) * width, width * sizeof *rows);
        job->done += nb;
        llm__kvs_commit(m, &job->seq, pos0 + job->done);
        if (job->done < job->n && job->cancel && atomic_load(job->cancel)) {
            st = llm__fail(err, LLM_CANCELLED, "cancelled");
            break;
        }
    }
    free(straddle);
    return st;
}
