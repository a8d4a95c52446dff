/* Known differences of test_chat_templates.c: {template, conversation, reason}.
 * Each pair listed must fail, each pair not listed must pass. None today: the
 * entry below names no real template (C needs a non-empty array). */
{"(none)", "(none)", "placeholder"},
