//===- Expected.h - A value or an error message ----------------*- C++ -*-===//

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

/// Success or an error message.
struct Status {
  std::string message;
  static Status ok() { return {}; }
  static Status failure(std::string m) { return {std::move(m)}; }
  explicit operator bool() const { return message.empty(); }
};

} // namespace seam::rt

#endif // SEAM_RUNTIME_EXPECTED_H
