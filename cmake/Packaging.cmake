# Installation of what is not a build target (the operator scripts, the man page, examples) and
# the Debian package: `cmake --install build` and `cd build && cpack -G DEB`.
#
# Layout (CMAKE_INSTALL_PREFIX=/usr in the package):
#   bin/denpex-probe                the probe (launch/CMakeLists.txt); links no MPI
#   lib/denpex/denpex-mpi-*.so      its MPI transport plugins, one per MPI ABI, found from
#                                   bin/../lib/denpex (collect/CMakeLists.txt)
#   lib/libdenpex-trace.so          the NCCL call recorder (launch/trace/CMakeLists.txt)
#   sbin/denpex-prolog              the Slurm Prolog (launch/slurm/CMakeLists.txt)
#   bin/denpex-validate-image       launch/validate-image (prefixed: /usr/bin is shared)
#   share/man/man1/denpex-probe.1
#   share/doc/denpex-probe/{slurm,examples}/
install(PROGRAMS ${PROJECT_SOURCE_DIR}/launch/validate-image
        DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME denpex-validate-image)
install(FILES ${PROJECT_SOURCE_DIR}/launch/denpex-probe.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
if(EXISTS ${PROJECT_SOURCE_DIR}/examples)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
          USE_SOURCE_PERMISSIONS)
endif()
foreach(doc README.md ARCHITECTURE.md)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${doc})
    install(FILES ${PROJECT_SOURCE_DIR}/${doc} DESTINATION ${CMAKE_INSTALL_DOCDIR})
  endif()
endforeach()

set(CPACK_PACKAGE_NAME denpex-probe)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "denpex")
set(CPACK_PACKAGE_CONTACT "denpex team <team@denpex.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "pre-flight check of the NCCL, CUDA driver and PyTorch each rank of a job would load")
set(CPACK_PACKAGE_DESCRIPTION
    "denpex-probe rejects a distributed training job before it starts when its ranks would load different NCCL versions, an NCCL without the symbols PyTorch needs, a stub CUDA driver or differing NCCL plugins and settings. Runs under mpirun/srun, as a Slurm prolog (denpex-prolog) and on container images (denpex-validate-image).")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/denpex/denpex-probe")
# Library dependencies (fmt, libstdc++) from dpkg-shlibdeps; the scripts need these as well.
# No MPI: the plugins name no libmpi, and MPI mode uses the job's own MPI (Open MPI or an MPICH
# ABI), which alone mode, the prolog and image validation never need.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "coreutils, tar, gawk | mawk, jq")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin | mpich")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurmd")
# Only what the project installs, not the test stand-ins.
set(CPACK_COMPONENTS_ALL_IN_ONE_PACKAGE ON)
include(CPack)

if(DENPEX_BUILD_TESTS)
  # Builds the .deb from this build tree (after the tests are built, so cpack's preinstall step
  # has nothing left to build) and checks its contents.
  add_test(NAME packaging.deb
    COMMAND ${PROJECT_SOURCE_DIR}/tests/packaging/run_deb_test.sh ${PROJECT_BINARY_DIR}
            ${PROJECT_BINARY_DIR}/tests/packaging-work ${PROJECT_VERSION})
  set_tests_properties(packaging.deb PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE LABELS packaging)
endif()
