/* Stand-in for conda's python3.X interpreter: only its ELF header and DT_RPATH ($ORIGIN/../lib,
 * where conda's nccl package puts libnccl.so.2) are read; it is never run. */
int denpex_fake_python(void) { return 0; }
