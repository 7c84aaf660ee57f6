//===- Expected.h - A value or an error message ----------------*- C++ -*-===//
//
// The one error convention of the runtime and the tools:
//   - Expected<T>: a T, or an error message;
//   - Status (Expected<void>): success, or an error message.
// Both read the same way: `if (!x) report(x.error());`. A message names the
// problem (what, where, why) and callers add context in front of it. No
// exceptions, no empty-string sentinels. Code in LLVM/MLIR land (dialects,
// passes, lowering, seam-import) keeps LLVM's llvm::Expected / LogicalResult.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_EXPECTED_H
#define SEAM_RUNTIME_EXPECTED_H

#include <optional>
#include <string>
#include <utility>

namespace seam::rt {

/// Either a T or a human-readable error naming what went wrong.
template <typename T> class Expected {
public:
  Expected(T value) : val(std::move(value)) {}
  static Expected failure(std::string message) {
    Expected e;
    e.message = std::move(message);
    return e;
  }
  explicit operator bool() const { return val.has_value(); }
  T &operator*() { return *val; }
  const T &operator*() const { return *val; }
  T *operator->() { return &*val; }
  const T *operator->() const { return &*val; }
  const std::string &error() const { return message; }

private:
  Expected() = default;
  std::optional<T> val;
  std::string message;
};

/// Success or a human-readable error naming what went wrong.
template <> class Expected<void> {
public:
  static Expected ok() { return Expected(); }
  static Expected failure(std::string message) {
    Expected e;
    e.failed = true;
    e.message = std::move(message);
    return e;
  }
  explicit operator bool() const { return !failed; }
  const std::string &error() const { return message; }

private:
  Expected() = default;
  bool failed = false;
  std::string message;
};

using Status = Expected<void>;

} // namespace seam::rt

#endif // SEAM_RUNTIME_EXPECTED_H
