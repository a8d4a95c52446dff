/* Known differences of test_chat_templates.c: {template, conversation, reason}.
 * Each pair listed must fail, each pair not listed must pass. */
{"llama-cpp-deepseek-r1.jinja", "tool_call",
 "jinja2's map() returns a generator, which tojson cannot serialize (TypeError); ours returns a list"},
