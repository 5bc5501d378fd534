/* The interface between denpex-probe and its MPI transport plugin: a small C ABI, so the probe
 * itself links no MPI and one probe binary works with Open MPI (libmpi.so.40) or an MPICH-ABI
 * MPI (libmpi.so.12: MPICH, Intel MPI, Cray MPICH, MVAPICH). Each plugin is this header
 * implemented against one MPI's mpi.h (mpi_plugin.c); nothing else of ours includes mpi.h.
 *
 * Rules across it: plain C types only, no C++ exceptions, no STL, no ownership of the caller's
 * memory. Every function returning int returns 0 on success (MPI_SUCCESS) or the MPI error
 * code, which error_string() turns into text. Messages are bytes on MPI_COMM_WORLD, whose error
 * handler init() sets to MPI_ERRORS_RETURN: a failing call returns, it never aborts the job. */
#ifndef DENPEX_MPI_PLUGIN_H
#define DENPEX_MPI_PLUGIN_H

#ifdef __cplusplus
extern "C" {
#endif

/* Raised when a function below changes meaning or one is added; the probe refuses another
 * value. 2: abort. */
#define DENPEX_MPI_PLUGIN_ABI 2
/* The symbol every plugin exports. */
#define DENPEX_MPI_PLUGIN_ENTRY "denpex_mpi_plugin_v1"
/* `source` of iprobe: a message from any rank. */
#define DENPEX_MPI_ANY_SOURCE (-1)

typedef struct denpex_mpi_plugin {
  int abi;              /* DENPEX_MPI_PLUGIN_ABI */
  const char* family;   /* "open-mpi" or "mpich": the ABI it was built against */

  /* MPI_Init, errors returned from here on, this process's rank and the world's size. */
  int (*init)(int* argc, char*** argv, int* rank, int* size);
  /* MPI_Get_library_version's first line into out (always terminated); callable before init. */
  void (*library_version)(char* out, int out_len);
  /* MPI_Send of len bytes. */
  int (*send)(const void* buf, int len, int dest, int tag);
  /* Whether a message with `tag` from `source` (or DENPEX_MPI_ANY_SOURCE) waits; if so its
   * sender and length in bytes. Never blocks. */
  int (*iprobe)(int source, int tag, int* found, int* from, int* len);
  /* MPI_Recv of exactly the message iprobe announced (len bytes) from source. */
  int (*recv)(void* buf, int len, int source, int tag);
  /* MPI_Finalize. */
  int (*finalize)(void);
  /* MPI_Error_string of code into out (always terminated). */
  void (*error_string)(int code, char* out, int out_len);
  /* MPI_Abort(MPI_COMM_WORLD, code): the launcher ends every rank and exits with code (how
   * each launcher passes it on: docs/launchers.md). Returns only when MPI_Abort fails, with
   * its error code. */
  int (*abort)(int code);
} denpex_mpi_plugin;

/* Returns the plugin's table (static storage); never NULL. */
/* The plugins are built with hidden visibility: this is the one symbol they export. */
typedef const denpex_mpi_plugin* (*denpex_mpi_plugin_entry)(void);
__attribute__((visibility("default"))) const denpex_mpi_plugin* denpex_mpi_plugin_v1(void);

#ifdef __cplusplus
}
#endif

#endif
