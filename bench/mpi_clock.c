/* Preloaded into both programs of benchmark 2 (mpirun -x LD_PRELOAD=...): the time rank 0
 * spends from entering MPI_Init to its answer, measured inside the process so that mpirun's own
 * start-up (about 350 ms, the same for both) does not drown a regression of a few ms.
 * "Its answer" is the first of MPI_Finalize, exit and _exit on rank 0: the floor program's
 * MPI_Finalize after its gather, the probe's exit after the verdict (rank 0 may leave without
 * MPI_Finalize). Appends "<ms>\n" to the file named by $DENPEX_BENCH_CLOCK. A process forked
 * before MPI_Init (the probe's isolated child) never entered MPI_Init and writes nothing. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double t_init = -1;
static int is_rank0 = 0;
static int stamped = 0;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void stamp(void) {
  if (stamped || t_init < 0 || !is_rank0) return;
  stamped = 1;
  const char* out = getenv("DENPEX_BENCH_CLOCK");
  FILE* f = out ? fopen(out, "a") : NULL;
  if (f == NULL) return;
  fprintf(f, "%.3f\n", now_ms() - t_init);
  fclose(f);
}

int MPI_Init(int* argc, char*** argv) {
  t_init = now_ms();
  int rc = PMPI_Init(argc, argv);
  int rank = -1;
  if (rc == MPI_SUCCESS) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  is_rank0 = rank == 0;
  return rc;
}

int MPI_Finalize(void) {
  stamp();
  return PMPI_Finalize();
}

void exit(int code) {
  stamp();
  void (*real)(int) = NULL;
  *(void**)(&real) = dlsym(RTLD_NEXT, "exit");  /* the POSIX way past ISO C's object/function split */
  real(code);
  abort();
}

void _exit(int code) {
  stamp();
  void (*real)(int) = NULL;
  *(void**)(&real) = dlsym(RTLD_NEXT, "_exit");  /* the POSIX way past ISO C's object/function split */
  real(code);
  abort();
}
