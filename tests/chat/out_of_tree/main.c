/* Out-of-tree example: render a two-message conversation with a named chat
 * template family using only the installed llama-chat library, and print the
 * prompt text.
 * usage: render_chat TEMPLATE_NAME (e.g. chatml) */
#include <stdio.h>
#include <stdlib.h>

#include <llama/chat.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s TEMPLATE_NAME\n", argv[0]);
        return 2;
    }
    llm_chat_template t;
    if (llm_chat_template_from_name(argv[1], &t) != LLM_OK) {
        fprintf(stderr, "%s\n", llm_chat_last_error());
        return 1;
    }
    const llm_chat_message msgs[] = {{"system", "You are terse."}, {"user", "Hello!"}};
    llm_chat_params p = llm_chat_default_params();
    p.add_generation_prompt = true;
    char *text = NULL;
    size_t len = 0;
    if (llm_chat_render_alloc(t, msgs, 2, &p, &text, &len) != LLM_OK) {
        fprintf(stderr, "%s\n", llm_chat_last_error());
        return 1;
    }
    fwrite(text, 1, len, stdout);
    free(text);
    return 0;
}
