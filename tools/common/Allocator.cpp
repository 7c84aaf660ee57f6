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
// Not ahead of every allocation: libLLVM's and libMLIR's static
// constructors run first and initialise mimalloc, so the segments opened
// then stay in small pages (63 MB of a flux2-klein compile and run end up
// in huge pages, 96 MB when the option is set at initialisation). Setting
// it from the executable's .preinit_array, which runs before them, cut the
// page faults from 21.6k to 8.8k but made the emitter's phase slower and
// more erratic on the development machine (median 0.095 -> 0.144 s), so it
// stays here.
//
//===----------------------------------------------------------------------===//
#include <mimalloc.h>

namespace {
struct LargePages {
  LargePages() { mi_option_enable(mi_option_large_os_pages); }
} largePages;
} // namespace
