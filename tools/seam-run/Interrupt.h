//===- Interrupt.h - temporary directories removed on SIGINT/SIGTERM -*- C++
//-*-===//
//
// seam-run keeps its compile caches (its own, kernels=auto's windows',
// --explain-kernels') in fresh temporary directories that are removed when
// the run ends. A run stopped by Ctrl-C or a SIGTERM never reaches those
// destructors, so the directories are also registered here: the signal
// handler removes every registered one with async-signal-safe calls only
// (open, getdents64, unlinkat, rmdir, write), prints one line saying the run
// was interrupted, and exits 128 + the signal (130 for SIGINT).
//
// The directories are flat (HostCache writes DIR/KEY.seamcache and
// DIR/.tmp-*), so no recursion is needed in the handler.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_TOOLS_SEAM_RUN_INTERRUPT_H
#define SEAM_TOOLS_SEAM_RUN_INTERRUPT_H

#include <string>

namespace seamrun {

/// Installs the handler for SIGINT, SIGTERM and SIGHUP; `tool` starts the
/// line it prints ("seam-run: interrupted (SIGINT); ..."). Not signal-safe:
/// call it from main before any work starts.
void installInterruptCleanup(const char *tool);

/// A temporary directory that is removed when this object dies or the
/// process is interrupted (when installInterruptCleanup ran), whichever
/// comes first. Its path is copied into a fixed slot the handler reads; with
/// every slot taken, only the destructor removes it.
class TemporaryDirectory {
public:
  TemporaryDirectory() = default;
  /// Creates a fresh directory "PREFIX-XXXXXX" in the temp directory; false
  /// (and `error` set) when it cannot.
  bool create(const char *prefix, std::string &error);
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory &) = delete;
  TemporaryDirectory &operator=(const TemporaryDirectory &) = delete;

  const std::string &path() const { return dir; }

private:
  std::string dir;
  int slot = -1;
};

} // namespace seamrun

#endif
