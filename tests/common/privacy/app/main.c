int llm_fixture_a(void);
int main(void) { return llm_fixture_a(); }
