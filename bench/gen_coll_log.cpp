// Benchmark 7: a 64-rank NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL log of 20,000
// steps (about 245 MB) in NCCL 2.2x's line format, ranks interleaved within each step as one
// shared stdout shows them, for `denpex-probe diagnose` against `grep -c 'NCCL INFO'`.
//   gen_coll_log OUT [RANKS] [STEPS] [DIVERGE_STEP]
// DIVERGE_STEP >= 0 makes the last rank call a different count at that step (a real finding to
// report); default -1 (all ranks agree, the whole file must still be read and compared).
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gen_coll_log OUT [RANKS] [STEPS] [DIVERGE_STEP]\n");
    return 2;
  }
  int ranks = argc > 2 ? std::atoi(argv[2]) : 64;
  long steps = argc > 3 ? std::atol(argv[3]) : 20000;
  long diverge = argc > 4 ? std::atol(argv[4]) : -1;
  std::FILE* out = std::fopen(argv[1], "w");
  if (!out) {
    std::perror(argv[1]);
    return 2;
  }
  static char buf[1 << 20];
  std::setvbuf(out, buf, _IOFBF, sizeof buf);
  const int per_node = 8;
  for (int r = 0; r < ranks; ++r) {
    int node = r / per_node + 1, dev = r % per_node;
    std::fprintf(out,
                 "gpu-node%03d:%d:%d [%d] NCCL INFO comm 0x%llx rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 "
                 "commId 0x5d7c1e0a9b3f2c44 localRanks %d localRank %d MNNVL 0 - Init COMPLETE\n",
                 node, 41000 + r, 41000 + r, dev, 0x55d0a0000000ULL + r * 0x1000ULL, r, ranks, dev, dev, 0x1b + dev,
                 per_node, dev);
  }
  static const unsigned long long counts[] = {7382228, 7066572, 554400, 335, 1048576, 262144};
  for (long s = 0; s < steps; ++s) {
    unsigned long long count = counts[s % 6];
    for (int k = 0; k < ranks; ++k) {
      // Interleaving differs from step to step, as with a shared terminal.
      int r = static_cast<int>((k * 7 + s) % ranks);
      if (ranks % 7 == 0) r = k;
      int node = r / per_node + 1, dev = r % per_node;
      unsigned long long c = (s == diverge && r == ranks - 1) ? count + 1 : count;
      std::fprintf(out,
                   "gpu-node%03d:%d:%d [%d] NCCL INFO AllReduce: opCount %lx sendbuff 0x7f%010llx recvbuff 0x7f%010llx "
                   "count %llu datatype 7 op 0 root 0 comm 0x%llx [nranks=%d] stream 0x%llx\n",
                   node, 41000 + r, 41000 + r, dev, s, 0x56200000ULL + (s % 97) * 0x100000ULL,
                   0x56200000ULL + (s % 97) * 0x100000ULL, c, 0x55d0a0000000ULL + r * 0x1000ULL, ranks,
                   0x55d0b1e00000ULL + r * 0x10ULL);
    }
  }
  return std::fclose(out) == 0 ? 0 : 2;
}
