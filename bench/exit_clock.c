/* Preloaded into both programs of the torchrun benchmark: rank 0's time from its start (this
 * library's constructor, before main) to its exit, measured inside the process so that
 * torchrun's own start-up (importing torch, the rendezvous: seconds, the same for both) does
 * not drown a difference of a few ms. Appends "<ms>\n" to $DENPEX_BENCH_CLOCK when RANK is 0.
 * A child the process forks (the probe's isolated child) is not the process that started and
 * writes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double t_start = -1;
static pid_t started_pid = 0;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((constructor)) static void on_start(void) {
  const char* rank = getenv("RANK");
  if (!rank || strcmp(rank, "0") != 0) return;
  t_start = now_ms();
  started_pid = getpid();
}

__attribute__((destructor)) static void on_exit_stamp(void) {
  if (t_start < 0 || getpid() != started_pid) return;
  const char* out = getenv("DENPEX_BENCH_CLOCK");
  FILE* f = out ? fopen(out, "a") : NULL;
  if (!f) return;
  fprintf(f, "%.3f\n", now_ms() - t_start);
  fclose(f);
}
