# Cross toolchain for aarch64 (GH200/GB200 hosts) on a Debian x86_64 machine: Debian's
# g++-aarch64-linux-gnu and the :arm64 dev packages (multiarch, /usr/lib/aarch64-linux-gnu).
# No sysroot: Debian's cross compiler already searches the aarch64 multiarch directories.
# Used by .ci/aarch64.sh:  cmake -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake ...
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Packages only from the aarch64 directories (or arch-independent ones: nlohmann_json, CLI11 and
# Catch2 are header-only), never the host's x86_64 libraries.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config would otherwise answer with the host's x86_64 .pc files (Open MPI's, MPICH's).
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
