int llm_fixture_a(void);
int llm_fixture_a(void) { return 0; }
