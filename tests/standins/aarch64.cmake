# aarch64 stand-ins, cross-built with Debian's gcc-aarch64-linux-gnu (tools/install-deps.sh), so
# the arm64 image tests (GH200/GB200 images) run on an x86_64 build: NCCL 2.27.3 (and 2.28.9, the
# wheel's), PyTorch's libtorch_cuda.so with the wheel's forced RPATH, a libcuda.so.1. Same C
# sources, sonames and version literals as the x86_64 ones. They land in
# ${DENPEX_STANDINS_DIR}/aarch64/<variant>/. The loader of the tree is Debian's real arm64 ld.so
# from libc6-arm64-cross (/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1), copied by the tests.
find_program(DENPEX_AARCH64_CC aarch64-linux-gnu-gcc)
set(DENPEX_AARCH64_STANDINS_DIR ${DENPEX_STANDINS_DIR}/aarch64 CACHE INTERNAL "")
set(DENPEX_AARCH64_LDSO /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 CACHE INTERNAL "")
if(NOT DENPEX_AARCH64_CC)
  # Not fatal for the build: the tests that need these fail and say what to install.
  message(WARNING "aarch64-linux-gnu-gcc not found: the arm64 image tests will fail "
                  "(install gcc-aarch64-linux-gnu, see tools/install-deps.sh)")
  return()
endif()
add_custom_target(denpex_standins_aarch64 ALL)
add_dependencies(denpex_standins denpex_standins_aarch64)

# denpex_standin_aarch64(<variant> <source> <soname> <file name> [DEFS d...] [RPATH r]
#                        [NEEDS <variant>/<file>])
function(denpex_standin_aarch64 variant source soname file)
  cmake_parse_arguments(S "" "RPATH;NEEDS" "DEFS" ${ARGN})
  set(dir ${DENPEX_AARCH64_STANDINS_DIR}/${variant})
  set(out ${dir}/${file})
  set(flags -shared -fPIC -w -O1 -Wl,-soname,${soname})
  foreach(d ${S_DEFS})
    list(APPEND flags -D${d})
  endforeach()
  set(deps ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  if(S_RPATH)
    list(APPEND flags -Wl,--disable-new-dtags "-Wl,-rpath,${S_RPATH}")
  endif()
  set(libs "")
  if(S_NEEDS)
    # Linked by file: DT_NEEDED gets its soname, and no directory of the build leaks in.
    set(libs ${DENPEX_AARCH64_STANDINS_DIR}/${S_NEEDS})
    list(APPEND deps ${libs})
  endif()
  set(link_cmd "")
  if(NOT file STREQUAL soname)
    set(link_cmd COMMAND ${CMAKE_COMMAND} -E create_symlink ${file} ${dir}/${soname})
  endif()
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${DENPEX_AARCH64_CC} ${flags} -o ${out} ${CMAKE_CURRENT_SOURCE_DIR}/${source} ${libs}
    ${link_cmd}
    DEPENDS ${deps}
    COMMENT "aarch64 stand-in ${variant}/${file}"
    VERBATIM)
  add_custom_target(standin_aarch64_${variant} DEPENDS ${out})
  add_dependencies(denpex_standins_aarch64 standin_aarch64_${variant})
endfunction()

denpex_standin_aarch64(nccl-2.27.3 fake_nccl.c libnccl.so.2 libnccl.so.2.27.3
  DEFS NCCL_MAJOR=2 NCCL_MINOR=27 NCCL_PATCH=3 NCCL_CUDA="12.9" WITH_COMM_REGISTER)
denpex_standin_aarch64(nccl-2.28.9-cu12 fake_nccl.c libnccl.so.2 libnccl.so.2.28.9
  DEFS NCCL_MAJOR=2 NCCL_MINOR=28 NCCL_PATCH=9 NCCL_CUDA="12.9" WITH_COMM_REGISTER)
denpex_standin_aarch64(nccl-linkstub fake_nccl.c libnccl.so.2 libnccl.so.2
  DEFS NCCL_MAJOR=2 NCCL_MINOR=28 NCCL_PATCH=9 NCCL_CUDA="13.0" WITH_COMM_REGISTER)
denpex_standin_aarch64(torch-dyn fake_torch_cuda.c libtorch_cuda.so libtorch_cuda.so
  RPATH "$ORIGIN/../../nvidia/nccl/lib" NEEDS nccl-linkstub/libnccl.so.2)
add_dependencies(standin_aarch64_torch-dyn standin_aarch64_nccl-linkstub)
denpex_standin_aarch64(cuda-550.54.15 fake_cuda.c libcuda.so.1 libcuda.so.550.54.15
  DEFS DRIVER_CUDA=12040)
denpex_standin_aarch64(python-conda fake_python.c python3.11 python3.11 RPATH "$ORIGIN/../lib")
