# embed_assets.cmake — turns the dashboard's files into one C source, run at build time:
#   cmake -DWEB_DIR=<source>/web -DOUT=<build>/generated/dashboard_assets.c -P embed_assets.cmake
# Each file of WEB_DIR (recursively, sorted) becomes a static const unsigned char array, and
# the table dashboard_assets[] (master/api/dashboard.h) names it by its path under WEB_DIR.
cmake_minimum_required(VERSION 3.18)

if(NOT WEB_DIR OR NOT OUT)
  message(FATAL_ERROR "embed_assets.cmake: pass -DWEB_DIR=<dir> -DOUT=<file.c>")
endif()

file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE ${WEB_DIR} ${WEB_DIR}/*)
list(SORT files)

string(REPEAT "[0-9a-f]" 32 line_of_hex)
set(arrays "")
set(table "")
set(index 0)
foreach(name ${files})
  # Editor droppings and dotfiles are never part of the product.
  if(name MATCHES "(^|/)\\.|~$")
    continue()
  endif()
  file(READ ${WEB_DIR}/${name} hex HEX)
  string(LENGTH "${hex}" hex_len)
  math(EXPR len "${hex_len} / 2")
  if(len EQUAL 0)
    set(bytes "0")
  else()
    # A line break after every 16 bytes (CMake's regex has no {n}), then
    # two hex digits -> "0xNN,".
    string(REGEX REPLACE "(${line_of_hex})" "\\1\n    " bytes "${hex}")
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${bytes}")
  endif()
  string(APPEND arrays "/* ${name} */\nstatic const unsigned char asset_${index}[] = {\n    ${bytes}\n};\n\n")
  string(APPEND table "    {\"${name}\", asset_${index}, ${len}},\n")
  math(EXPR index "${index} + 1")
endforeach()

if(index EQUAL 0)
  message(FATAL_ERROR "embed_assets.cmake: no files in ${WEB_DIR}")
endif()

set(text "/* Generated from web/ by cmake/embed_assets.cmake at build time: do not edit or commit. */
#include \"dashboard.h\"

${arrays}const dashboard_asset_t dashboard_assets[] = {
${table}};

const size_t dashboard_asset_count = ${index};
")

file(WRITE ${OUT} "${text}")
