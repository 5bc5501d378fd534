/* Stand-in for an NCCL net plugin (libnccl-net.so, e.g. aws-ofi-nccl): NCCL recognises the
 * plugin API version by the exported symbol name, ncclNetPlugin_v8 / ncclCollNetPlugin_v8. The
 * contents are not read by the probe; a zeroed struct of plausible size stands in. */
struct opaque_plugin { const char* name; void* fns[24]; };
#ifndef PLUGIN_VERSION
#define PLUGIN_VERSION v8
#endif
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
const struct opaque_plugin CAT(ncclNetPlugin_, PLUGIN_VERSION) = {"FakeNet", {0}};
const struct opaque_plugin CAT(ncclCollNetPlugin_, PLUGIN_VERSION) = {"FakeCollNet", {0}};
