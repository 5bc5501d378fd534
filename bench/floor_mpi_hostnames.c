/* Floor for benchmark 2: the least an MPI pre-flight gate must do: start MPI, gather one host
 * name per rank to rank 0 (MPI_Gather of fixed 256-byte buffers) and exit. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char host[256];
  memset(host, 0, sizeof host);
  gethostname(host, sizeof host - 1);
  char* all = rank == 0 ? malloc((size_t)size * 256) : NULL;
  MPI_Gather(host, 256, MPI_CHAR, all, 256, MPI_CHAR, 0, MPI_COMM_WORLD);
  int ok = 1;
  if (rank == 0) {
    for (int r = 0; r < size; ++r) ok &= all[(size_t)r * 256] != '\0';
    free(all);
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
