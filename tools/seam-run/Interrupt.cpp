//===- Interrupt.cpp - temporary directories removed on SIGINT/SIGTERM ----===//
#include "tools/seam-run/Interrupt.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace seamrun;

namespace {

constexpr int kSlots = 8;
constexpr size_t kPathMax = 4096;

/// A slot is free (0), being written (1) or holds a path the handler may
/// read (2). Paths are copied in before the slot is published.
std::atomic<int> slotState[kSlots];
char slotPath[kSlots][kPathMax];
const char *toolName = "seam-run";

/// write(2) of a NUL-terminated string, retried on EINTR (signal-safe).
void say(const char *s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    s += w;
    n -= size_t(w);
  }
}

/// Removes the entries of the flat directory `path`, then the directory,
/// with signal-safe system calls only. A writer still running on another
/// thread may add an entry meanwhile: a few passes take it too.
bool removeFlatDirectory(const char *path) {
  for (int pass = 0; pass < 4; ++pass) {
    int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
      return errno == ENOENT;
    alignas(8) char buf[4096];
    for (;;) {
      long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0)
        break;
      for (long off = 0; off < n;) {
        // struct linux_dirent64: ino (8), off (8), reclen (2), type (1),
        // name (NUL-terminated).
        unsigned short reclen;
        std::memcpy(&reclen, buf + off + 16, sizeof reclen);
        const char *name = buf + off + 19;
        if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0 &&
            ::unlinkat(fd, name, 0) != 0 && errno == EISDIR)
          ::unlinkat(fd, name, AT_REMOVEDIR);
        off += reclen;
      }
    }
    ::close(fd);
    if (::rmdir(path) == 0 || errno == ENOENT)
      return true;
  }
  return false;
}

extern "C" void onInterrupt(int sig) {
  // Another thread may take the same signal: one cleanup, one line.
  static std::atomic<bool> once{false};
  if (once.exchange(true)) {
    for (;;)
      ::pause();
  }
  const char *name = sig == SIGINT    ? "SIGINT"
                     : sig == SIGTERM ? "SIGTERM"
                     : sig == SIGHUP  ? "SIGHUP"
                                      : "a signal";
  int removed = 0, left = 0;
  for (int i = 0; i < kSlots; ++i) {
    if (slotState[i].load() != 2)
      continue;
    if (removeFlatDirectory(slotPath[i]))
      ++removed;
    else
      ++left;
  }
  say("\n");
  say(toolName);
  say(": interrupted (");
  say(name);
  say(")");
  if (removed)
    say("; temporary compile cache removed");
  if (left) {
    say("; could not remove a temporary cache in $TMPDIR (seam-*-cache-*)");
  }
  say("\n");
  ::_exit(128 + sig);
}

int takeSlot(const std::string &path) {
  if (path.size() >= kPathMax)
    return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!slotState[i].compare_exchange_strong(expected, 1))
      continue;
    std::memcpy(slotPath[i], path.c_str(), path.size() + 1);
    slotState[i].store(2);
    return i;
  }
  return -1;
}

void releaseSlot(int slot) {
  if (slot >= 0)
    slotState[slot].store(0);
}

} // namespace

void seamrun::installInterruptCleanup(const char *tool) {
  toolName = tool;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = onInterrupt;
  sigemptyset(&sa.sa_mask);
  // The other stop signals wait while one is handled.
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    sigaddset(&sa.sa_mask, sig);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    ::sigaction(sig, &sa, nullptr);
}

bool TemporaryDirectory::create(const char *prefix, std::string &error) {
  // The path is registered before the directory exists: an interrupt at any
  // point finds it (removing a directory that is not there yet is a
  // success), where creating first left a window in which the handler found
  // no slot and the directory stayed behind (seen as a failing
  // seam-run-interrupt.test under load). The handler may run on any thread,
  // so blocking signals on this one would not close that window.
  llvm::SmallString<128> model;
  llvm::sys::path::system_temp_directory(/*erasedOnReboot=*/true, model);
  llvm::sys::path::append(model, llvm::Twine(prefix) + "-%%%%%%%%%%%%");
  std::error_code ec;
  for (int attempt = 0; attempt < 128; ++attempt) {
    llvm::SmallString<128> path;
    llvm::sys::fs::createUniquePath(model, path, /*MakeAbsolute=*/false);
    int s = takeSlot(std::string(path));
    ec = llvm::sys::fs::create_directory(path, /*IgnoreExisting=*/false);
    if (!ec) {
      dir = std::string(path);
      slot = s;
      return true;
    }
    releaseSlot(s);
    if (ec != std::errc::file_exists)
      break;
  }
  error = "cannot create a temporary directory for the compile cache: " +
          ec.message();
  return false;
}

TemporaryDirectory::~TemporaryDirectory() {
  // Removed while still registered, then unregistered: an interrupt during
  // the removal finishes it (both remove entries; a missing one is no
  // error), where unregistering first left a window in which it stayed.
  // A directory that cannot be removed is left behind, said on stderr.
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::remove_directories(dir))
      llvm::errs() << toolName << ": warning: could not remove temporary "
                   << "directory '" << dir << "': " << ec.message() << "\n";
  releaseSlot(slot);
}
