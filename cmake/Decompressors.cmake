# zlib, libzstd and liblzma: the libraries that undo gzip, zstd and xz for evidence/decode.cpp.
# Debian: zlib1g-dev, libzstd-dev, liblzma-dev (and their :arm64 packages for the aarch64 cross
# build). In the portable build (DENPEX_PORTABLE) their static archives are linked, so the
# tarball's binaries name none of them in NEEDED (tests/portable/check.sh checks it); everywhere
# else the shared libraries, which every Debian system has (dpkg itself needs all three).
# Defines denpex_decompressors, an INTERFACE target with the three libraries and their headers.
if(DENPEX_PORTABLE)
  set(_denpex_dc_names libz.a libzstd.a liblzma.a)
else()
  set(_denpex_dc_names z zstd lzma)
endif()
set(_denpex_dc_headers zlib.h zstd.h lzma.h)
set(_denpex_dc_libs "")
foreach(i RANGE 2)
  list(GET _denpex_dc_names ${i} _name)
  list(GET _denpex_dc_headers ${i} _header)
  string(MAKE_C_IDENTIFIER "DENPEX_LIB_${_name}" _var)
  find_library(${_var} NAMES ${_name})
  find_path(${_var}_INCLUDE ${_header})
  if(NOT ${_var} OR NOT ${_var}_INCLUDE)
    message(FATAL_ERROR "denpex: ${_name} (${_header}) not found: install zlib1g-dev, libzstd-dev "
                        "and liblzma-dev (tools/install-deps.sh)")
  endif()
  list(APPEND _denpex_dc_libs ${${_var}})
endforeach()
add_library(denpex_decompressors INTERFACE)
target_link_libraries(denpex_decompressors INTERFACE ${_denpex_dc_libs})
message(STATUS "denpex: decompressors ${_denpex_dc_libs}")
