//===- Json.h - A small JSON reader and string escaper ---------*- C++ -*-===//
//
// The runtime does not link LLVM, so it carries its own reader for the
// hardware profiles (and for tests that check exported traces parse).
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_JSON_H
#define SEAM_RUNTIME_JSON_H

#include "runtime/Expected.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace seam::rt::json {

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0.0;
  std::string string;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;

  /// Member lookup in an object; nullptr when absent or not an object.
  const Value *get(std::string_view key) const;
  bool isNumber() const { return kind == Kind::Number; }
  bool isString() const { return kind == Kind::String; }
  bool isObject() const { return kind == Kind::Object; }
  bool isArray() const { return kind == Kind::Array; }
  bool isBool() const { return kind == Kind::Bool; }
};

/// Parses `text`; an error names the line and column of the problem.
Expected<Value> parse(std::string_view text);

/// Appends `text` as a JSON string literal (with quotes) to `out`.
void appendQuoted(std::string &out, std::string_view text);

} // namespace seam::rt::json

#endif // SEAM_RUNTIME_JSON_H
