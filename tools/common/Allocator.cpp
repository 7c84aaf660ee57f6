//===- Allocator.cpp - the tools' allocator settings ----------------------===//
//
// Linked into seam-run, seam-opt and seam-import when they link mimalloc
// (SEAM_MIMALLOC, the top-level CMakeLists.txt), which then serves every
// malloc of the process, libMLIR's included. A cold compile touches some
// 150 MB of fresh memory (IR, the scheduler's tables, the emitted program),
// and its page faults were ~10% of its time: 2 MiB pages (transparent huge
// pages through madvise, where the kernel allows them) take one fault where
// 4 KiB pages took 512. Set before main, ahead of the tools' own
// allocations; mimalloc falls back to small pages where large ones are not
// available.
//
//===----------------------------------------------------------------------===//
#include <mimalloc.h>

namespace {
struct LargePages {
  LargePages() { mi_option_enable(mi_option_large_os_pages); }
} largePages;
} // namespace
