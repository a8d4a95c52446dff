# Chat-template tests; included by tests/tokenizer/CMakeLists.txt.
llm_add_test(test_chat
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_chat.c
  LIBS llama-tokenizer PkgConfig::JANSSON
  TIMEOUT 60
  LABELS tokenizer chat)

# llama/chat.h must compile alone as C++ (inside extern "C").
set(_chat_cxx ${CMAKE_CURRENT_BINARY_DIR}/chat_header_cxx.cpp)
file(WRITE ${_chat_cxx}.in
  "#include \"llama/chat.h\"\n"
  "int main() {\n"
  "    llm_chat_params p = llm_chat_default_params();\n"
  "    llm_chat_template t;\n"
  "    return (llm_chat_template_from_name(\"chatml\", &t) == LLM_OK && !p.add_generation_prompt) ? 0 : 1;\n"
  "}\n")
configure_file(${_chat_cxx}.in ${_chat_cxx} COPYONLY)
add_executable(test_chat_header_cxx ${_chat_cxx})
target_link_libraries(test_chat_header_cxx PRIVATE llama-tokenizer)
add_test(NAME test_chat_header_cxx COMMAND test_chat_header_cxx)

llm_add_test(test_chat_jinja
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_chat_jinja.c
  LIBS llama-tokenizer PkgConfig::JANSSON
  TIMEOUT 60
  LABELS tokenizer chat)

# The 70 real templates against jinja2 (known failures: chat_templates_known.h).
llm_add_test(test_chat_templates
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_chat_templates.c
  LIBS llama-tokenizer PkgConfig::JANSSON
  TIMEOUT 120
  LABELS tokenizer chat)
