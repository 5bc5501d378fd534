/* The MPI transport plugin: mpi_plugin.h implemented against one MPI's mpi.h. Built once per
 * MPI ABI (collect/CMakeLists.txt): against Open MPI's headers (libmpi.so.40) and against
 * MPICH's (libmpi.so.12). The same source serves both because only the headers differ (handle
 * types, constants); the probe loads the matching libmpi before this plugin. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "collect/mpi_plugin/mpi_plugin.h"

#ifndef DENPEX_MPI_FAMILY
#error "DENPEX_MPI_FAMILY (\"open-mpi\" or \"mpich\") must be defined by the build"
#endif

static int p_init(int* argc, char*** argv, int* rank, int* size) {
  int rc = MPI_Init(argc, argv);
  if (rc != MPI_SUCCESS) return rc;
  /* Errors are return codes from here on, never an abort inside the library. */
  rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_Comm_rank(MPI_COMM_WORLD, rank);
  if (rc != MPI_SUCCESS) return rc;
  return MPI_Comm_size(MPI_COMM_WORLD, size);
}

static void p_library_version(char* out, int out_len) {
  char s[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (out_len <= 0) return;
  out[0] = '\0';
  if (MPI_Get_library_version(s, &len) != MPI_SUCCESS) return;
  s[sizeof s - 1] = '\0';
  s[strcspn(s, "\n,")] = '\0';
  snprintf(out, (size_t)out_len, "%s", s);
}

static int p_send(const void* buf, int len, int dest, int tag) {
  /* MPI-2 headers (old MPICH ABI) take a non-const buffer; MPI_Send never writes to it. */
  return MPI_Send((void*)buf, len, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
}

static int p_iprobe(int source, int tag, int* found, int* from, int* len) {
  MPI_Status st;
  int rc = MPI_Iprobe(source == DENPEX_MPI_ANY_SOURCE ? MPI_ANY_SOURCE : source, tag,
                      MPI_COMM_WORLD, found, &st);
  if (rc != MPI_SUCCESS || !*found) return rc;
  *from = st.MPI_SOURCE;
  return MPI_Get_count(&st, MPI_BYTE, len);
}

static int p_recv(void* buf, int len, int source, int tag) {
  return MPI_Recv(buf, len, MPI_BYTE, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static int p_finalize(void) { return MPI_Finalize(); }

static int p_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }

static void p_error_string(int code, char* out, int out_len) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (out_len <= 0) return;
  if (MPI_Error_string(code, s, &len) == MPI_SUCCESS) {
    s[sizeof s - 1] = '\0';
    snprintf(out, (size_t)out_len, "%s", s);
  } else {
    snprintf(out, (size_t)out_len, "MPI error %d", code);
  }
}

const denpex_mpi_plugin* denpex_mpi_plugin_v1(void) {
  static const denpex_mpi_plugin table = {
      DENPEX_MPI_PLUGIN_ABI, DENPEX_MPI_FAMILY, p_init,     p_library_version, p_send,
      p_iprobe,              p_recv,            p_finalize, p_error_string,    p_abort,
  };
  return &table;
}
