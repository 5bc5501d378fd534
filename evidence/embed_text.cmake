# Writes the signal table text as a C++ array: cmake -DIN=signals.txt -DOUT=signals_text.cpp -P
# embed_text.cmake. Hex bytes, so no quoting or literal-length limit applies to the text.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," body "${hex}")
file(WRITE ${OUT} "// Generated from evidence/signals.txt at build time; do not edit.\n"
  "namespace denpex::evidence {\n"
  "extern const char kSignalsText[];\nextern const unsigned long kSignalsTextSize;\n"
  "const char kSignalsText[] = {${body}0};\n"
  "const unsigned long kSignalsTextSize = ${bytes};\n}\n")
