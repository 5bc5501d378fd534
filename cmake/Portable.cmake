# The portable build (DENPEX_PORTABLE=ON, made by tools/portable-build.sh in a Debian 11 root):
# binaries that need nothing beside glibc, so one tarball runs in any x86_64 image or host from
# glibc 2.31 on. Built against an old glibc (the floor is the build root's glibc, checked by
# tests/portable/check.sh), with libstdc++, libgcc and fmt linked in. glibc stays dynamic:
# the probe dlopens NCCL, the CUDA driver and the MPI plugins, which a static glibc cannot do.
option(DENPEX_PORTABLE "Link libstdc++, libgcc and fmt statically (tools/portable-build.sh)" OFF)
if(NOT DENPEX_PORTABLE)
  return()
endif()

add_link_options(-static-libstdc++ -static-libgcc)
# A shared library with libstdc++ inside must not export it: libdenpex-trace.so is preloaded
# into programs with their own (newer) libstdc++.so.6, and an exported std:: symbol of ours would
# interpose on theirs. --exclude-libs keeps every symbol from a static archive local.
string(APPEND CMAKE_SHARED_LINKER_FLAGS " -Wl,--exclude-libs,ALL")
string(APPEND CMAKE_MODULE_LINKER_FLAGS " -Wl,--exclude-libs,ALL")

# fmt: a static archive (tools/portable-build.sh builds one: Debian 11 has none). A shared one
# would put libfmt.so.N among the probe's NEEDED entries, which the portable build must not have.
get_target_property(_denpex_fmt_type fmt::fmt TYPE)
if(NOT _denpex_fmt_type STREQUAL "STATIC_LIBRARY")
  message(FATAL_ERROR "DENPEX_PORTABLE: fmt::fmt is a ${_denpex_fmt_type}, not a static library "
    "(found in ${fmt_DIR}); point fmt_DIR at an fmt built with BUILD_SHARED_LIBS=OFF")
endif()
message(STATUS "denpex: portable build (static libstdc++, libgcc, fmt ${fmt_VERSION})")
