# Installation of what is not a build target (the operator scripts, the man page, examples) and
# the Debian package: `cmake --install build` and `cd build && cpack -G DEB`.
#
# Layout (CMAKE_INSTALL_PREFIX=/usr in the package):
#   bin/denpex-probe                the probe (launch/CMakeLists.txt); links no MPI
#   lib/x86_64-linux-gnu/denpex/denpex-mpi-*.so   its MPI transport plugins, one per MPI ABI,
#                                   found from bin/.. (collect/CMakeLists.txt)
#   lib/x86_64-linux-gnu/denpex/libdenpex-trace.so   the NCCL call recorder (recorder/CMakeLists.txt): only
#                                   ever LD_PRELOADed by path, so a private directory, not the
#                                   loader's (no ldconfig, no soname package)
#   sbin/denpex-prolog              the Slurm Prolog (launch/slurm/CMakeLists.txt)
#   bin/denpex-validate-image       launch/validate-image (prefixed: /usr/bin is shared)
#   share/man/man1/denpex-probe.1.gz, denpex-validate-image.1.gz, man8/denpex-prolog.8.gz
#   share/doc/denpex-probe/{copyright,changelog.gz,slurm,examples}/
install(PROGRAMS ${PROJECT_SOURCE_DIR}/launch/validate-image
        DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME denpex-validate-image)

# Debian policy: man pages and the changelog gzip-compressed (-n: no time stamp, reproducible),
# a copyright file in the doc directory.
set(_deb ${PROJECT_BINARY_DIR}/debian)
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in ${_deb}/changelog @ONLY)
set(_gz_outputs "")
foreach(pair "launch/denpex-probe.1;man1" "launch/denpex-validate-image.1;man1"
             "launch/slurm/denpex-prolog.8;man8")
  list(GET pair 0 src)
  list(GET pair 1 section)
  get_filename_component(name ${src} NAME)
  add_custom_command(OUTPUT ${_deb}/${name}.gz
    COMMAND gzip -n -9 -c ${PROJECT_SOURCE_DIR}/${src} > ${_deb}/${name}.gz
    DEPENDS ${PROJECT_SOURCE_DIR}/${src} VERBATIM)
  install(FILES ${_deb}/${name}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/${section})
  list(APPEND _gz_outputs ${_deb}/${name}.gz)
endforeach()
add_custom_command(OUTPUT ${_deb}/changelog.gz
  COMMAND gzip -n -9 -c ${_deb}/changelog > ${_deb}/changelog.gz
  DEPENDS ${_deb}/changelog VERBATIM)
list(APPEND _gz_outputs ${_deb}/changelog.gz)
add_custom_target(denpex_package_docs ALL DEPENDS ${_gz_outputs})
install(FILES ${_deb}/changelog.gz ${PROJECT_SOURCE_DIR}/cmake/debian/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
if(EXISTS ${PROJECT_SOURCE_DIR}/examples)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
          USE_SOURCE_PERMISSIONS)
endif()
foreach(doc README.md ARCHITECTURE.md)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${doc})
    install(FILES ${PROJECT_SOURCE_DIR}/${doc} DESTINATION ${CMAKE_INSTALL_DOCDIR})
  endif()
endforeach()
# The pages the README links to, beside it.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
# The licence text: the portable tarball carries it; the .deb does not, since its copyright file
# points to Debian's own copy (/usr/share/common-licenses/Apache-2.0) and lintian flags a second
# one (extra-license-file).
if(DENPEX_PORTABLE)
  install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
endif()

set(CPACK_PACKAGE_NAME denpex-probe)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "denpex")
set(CPACK_PACKAGE_CONTACT "denpex team <team@denpex.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "pre-flight check of the NCCL, CUDA and PyTorch ranks load")
# Lines of at most 80 characters (lintian); CPack adds the leading space.
set(CPACK_PACKAGE_DESCRIPTION
    "denpex-probe rejects a distributed training job before it starts when its ranks
would load different NCCL versions, an NCCL without the symbols PyTorch needs,
a stub CUDA driver or differing NCCL plugins and settings. It runs under
mpirun/srun, as a Slurm prolog (denpex-prolog) and on container images
(denpex-validate-image).")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/denpex/denpex-probe")
# Library dependencies (fmt, libstdc++) from dpkg-shlibdeps; the scripts need these as well.
# No MPI: the plugins name no libmpi, and MPI mode uses the job's own MPI (Open MPI or an MPICH
# ABI), which alone mode, the prolog and image validation never need.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# coreutils and tar are essential (always there; lintian rejects naming them).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "gawk | mawk, jq")
# Stripped binaries (lintian); the build tree keeps its debug information.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin | mpich")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurmd")
# Only what the project installs, not the test stand-ins.
set(CPACK_COMPONENTS_ALL_IN_ONE_PACKAGE ON)
include(CPack)

# Hardening of the programs the package installs (lintian: bindnow, fortify): full RELRO with
# immediate binding, and glibc's checked string/memory functions (they need optimisation, so
# not in Debug; nor under the sanitizers, which replace those functions themselves).
if(NOT DENPEX_SANITIZE)
  foreach(t denpex-probe denpex_trace)
    target_compile_definitions(${t} PRIVATE $<$<NOT:$<CONFIG:Debug>>:_FORTIFY_SOURCE=2>)
    target_link_options(${t} PRIVATE -Wl,-z,relro,-z,now)
  endforeach()
endif()
