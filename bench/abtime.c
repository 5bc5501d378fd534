/* Interleaved A/B wall-clock timer for bench/run.sh.
 *
 * usage: denpex_bench_abtime RUNS WARMUP CMD_A... [::: CMD_B...]
 *
 * Runs WARMUP untimed rounds, then RUNS rounds; in round i the two commands run in the order
 * AB when i is even and BA when i is odd, so drift in machine load (the other core's builds,
 * page cache, CPU frequency) falls on both sides alike. Each command is started with
 * posix_spawnp (no shell), stdout/stderr to /dev/null, and timed from spawn to wait4 with
 * CLOCK_MONOTONIC. Exit statuses are recorded, not judged (compare exits 1 on a reject).
 *
 * Output, one line per command, then (with B) one ratio line:
 *   A median_ms=2.41 min_ms=2.30 max_ms=2.90 maxrss_kb=5120 exit=0
 *   B median_ms=...
 *   ratio median_b_over_a=3.61 median_of_pair_ratios=3.58
 * Exit 0; 2 on bad usage or when a command cannot be started. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Runs argv once; returns wall ms, sets *status (exit code, or 128+signal) and *rss_kb. */
static double run_once(char** argv, int* status, long* rss_kb) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  double t0 = now_ms();
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    fprintf(stderr, "abtime: cannot start %s: %s\n", argv[0], strerror(rc));
    exit(2);
  }
  int ws = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  while (wait4(pid, &ws, 0, &ru) < 0) {
  }
  double t = now_ms() - t0;
  *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
  *rss_kb = ru.ru_maxrss;
  return t;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
  double* c = malloc(sizeof(double) * (size_t)n);
  memcpy(c, v, sizeof(double) * (size_t)n);
  qsort(c, (size_t)n, sizeof(double), cmp_double);
  double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
  free(c);
  return m;
}

struct side {
  char** argv;
  double* t;
  long rss;
  int status;
};

static void report(const char* name, struct side* s, int runs) {
  double mn = s->t[0], mx = s->t[0];
  for (int i = 1; i < runs; ++i) {
    if (s->t[i] < mn) mn = s->t[i];
    if (s->t[i] > mx) mx = s->t[i];
  }
  printf("%s median_ms=%.3f min_ms=%.3f max_ms=%.3f maxrss_kb=%ld exit=%d\n", name,
         median(s->t, runs), mn, mx, s->rss, s->status);
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s RUNS WARMUP CMD_A... [::: CMD_B...]\n", argv[0]);
    return 2;
  }
  int runs = atoi(argv[1]), warm = atoi(argv[2]);
  if (runs < 1 || warm < 0) {
    fprintf(stderr, "abtime: RUNS must be >= 1 and WARMUP >= 0\n");
    return 2;
  }
  struct side s[2];
  memset(s, 0, sizeof s);
  int nsides = 1;
  s[0].argv = argv + 3;
  for (int i = 3; i < argc; ++i) {
    if (strcmp(argv[i], ":::") == 0) {
      argv[i] = NULL;
      s[1].argv = argv + i + 1;
      nsides = 2;
      break;
    }
  }
  if (nsides == 2 && s[1].argv[0] == NULL) {
    fprintf(stderr, "abtime: nothing after :::\n");
    return 2;
  }
  for (int k = 0; k < nsides; ++k) s[k].t = calloc((size_t)runs, sizeof(double));
  for (int i = -warm; i < runs; ++i) {
    for (int j = 0; j < nsides; ++j) {
      int k = (i & 1) ? nsides - 1 - j : j;
      int st;
      long rss;
      double t = run_once(s[k].argv, &st, &rss);
      if (i < 0) continue;
      s[k].t[i] = t;
      s[k].status = st;
      if (rss > s[k].rss) s[k].rss = rss;
    }
  }
  report("A", &s[0], runs);
  if (nsides == 2) {
    report("B", &s[1], runs);
    double* pr = calloc((size_t)runs, sizeof(double));
    for (int i = 0; i < runs; ++i) pr[i] = s[1].t[i] / s[0].t[i];
    printf("ratio median_b_over_a=%.3f median_of_pair_ratios=%.3f\n",
           median(s[1].t, runs) / median(s[0].t, runs), median(pr, runs));
  }
  return 0;
}
