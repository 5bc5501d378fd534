/* A rank that leaves early, without MPI_Finalize, as an application's error path does (an
 * exit() in a library, a rank that gives up): for the launcher stress test
 * (tests/hostile/stress_faults.sh). Preloaded into one rank: $DENPEX_EXIT_AFTER seconds after
 * the process starts, a thread calls _exit($DENPEX_EXIT_CODE, default 3). A process forked
 * from it (the probe's isolated child) has no such thread. Not a stand-in for a real library:
 * a fault injector. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double seconds;
static int code = 3;

static void* exit_later(void* arg) {
  (void)arg;
  struct timespec t = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  while (nanosleep(&t, &t) != 0) {
  }
  _exit(code);
  return NULL;
}

__attribute__((constructor)) static void arm(void) {
  const char* after = getenv("DENPEX_EXIT_AFTER");
  const char* c = getenv("DENPEX_EXIT_CODE");
  if (after == NULL || *after == '\0') return;
  seconds = atof(after);
  if (seconds < 0) seconds = 0;
  if (c != NULL && *c != '\0') code = atoi(c);
  pthread_t t;
  if (pthread_create(&t, NULL, exit_later, NULL) == 0) pthread_detach(t);
}
