//===- Npy.cpp - .npy tensors in and out of seam-run ----------------------===//
//
// The NumPy format, version 1.0/2.0: magic "\x93NUMPY", version, header
// length, a Python dict literal {'descr', 'fortran_order', 'shape'}, data.
//
//===----------------------------------------------------------------------===//
#include "tools/seam-run/Npy.h"
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

using namespace seamrun;
namespace rt = ::seam::rt;

namespace {

/// Where the value of `'key':` starts in the header dict, after whitespace,
/// for each occurrence of the key in turn: `from` is the position to search
/// on from (0 at first); npos when no occurrence is left.
size_t nextValue(const std::string &header, const std::string &key,
                 size_t &from) {
  std::string quoted = "'" + key + "':";
  size_t at = header.find(quoted, from);
  if (at == std::string::npos)
    return std::string::npos;
  from = at + 1;
  size_t v = header.find_first_not_of(" \t\n\v\f\r", at + quoted.size());
  return v == std::string::npos ? header.size() : v;
}

/// The text of the first value of `key` written `open`...`close` (no `close`
/// inside), without the delimiters: the dict's 'descr' string or 'shape'
/// tuple. Searched as the regex '<key>':\s*<open>([^<close>]*)<close> is.
std::optional<std::string> delimitedValue(const std::string &header,
                                          const std::string &key, char open,
                                          char close) {
  size_t from = 0;
  for (size_t v; (v = nextValue(header, key, from)) != std::string::npos;) {
    if (v >= header.size() || header[v] != open)
      continue;
    size_t end = header.find(close, v + 1);
    if (end != std::string::npos)
      return header.substr(v + 1, end - v - 1);
  }
  return std::nullopt;
}

/// Whether some value of `key` starts with `word` ('fortran_order': True).
bool valueStartsWith(const std::string &header, const std::string &key,
                     const std::string &word) {
  size_t from = 0;
  for (size_t v; (v = nextValue(header, key, from)) != std::string::npos;)
    if (header.compare(v, word.size(), word) == 0)
      return true;
  return false;
}

} // namespace

rt::Expected<rt::HostTensor>
seamrun::readNpy(const std::string &path, bool *isComplex, std::string *dtype) {
  using R = rt::Expected<rt::HostTensor>;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return R::failure("cannot open '" + path + "': " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return R::failure("'" + path + "' is not a .npy file (bad magic)");
  unsigned major = uint8_t(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = uint8_t(bytes[8]) | (uint8_t(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return R::failure("'" + path + "': truncated header");
    headerLen = uint32_t(uint8_t(bytes[8])) |
                (uint32_t(uint8_t(bytes[9])) << 8) |
                (uint32_t(uint8_t(bytes[10])) << 16) |
                (uint32_t(uint8_t(bytes[11])) << 24);
    headerStart = 12;
  } else {
    return R::failure("'" + path + "': unsupported .npy version " +
                      std::to_string(major));
  }
  if (headerStart + headerLen > bytes.size())
    return R::failure("'" + path + "': truncated header");
  std::string header = bytes.substr(headerStart, headerLen);
  // No std::regex here: at -O1 with the sanitizers (the asan preset) gcc 12
  // reports -Wmaybe-uninitialized inside libstdc++'s regex automaton.
  std::optional<std::string> descrText =
      delimitedValue(header, "descr", '\'', '\'');
  if (!descrText)
    return R::failure("'" + path + "': header has no 'descr'");
  const std::string &descr = *descrText;
  if (valueStartsWith(header, "fortran_order", "True"))
    return R::failure("'" + path + "': Fortran order is not supported");
  std::optional<std::string> shapeText =
      delimitedValue(header, "shape", '(', ')');
  if (!shapeText)
    return R::failure("'" + path + "': header has no 'shape'");
  rt::HostTensor t;
  std::stringstream dims(*shapeText);
  std::string tok;
  uint64_t count = 1;
  while (std::getline(dims, tok, ',')) {
    if (tok.find_first_not_of(' ') == std::string::npos)
      continue;
    long long d = std::atoll(tok.c_str());
    if (d < 0 || d > (1ll << 36))
      return R::failure("'" + path + "': bad dimension '" + tok + "'");
    t.shape.push_back(d);
    count *= uint64_t(d);
    if (count > (1ull << 36))
      return R::failure("'" + path + "': tensor too large");
  }
  size_t dataStart = headerStart + headerLen;
  size_t elemBytes;
  bool complex = false;
  if (descr == "<f4")
    elemBytes = 4;
  else if (descr == "<f8")
    elemBytes = 8;
  else if (descr == "<c8")
    elemBytes = 8, complex = true;
  else
    return R::failure("'" + path + "': dtype '" + descr +
                      "' is not supported (float32, float64, complex64)");
  if (bytes.size() - dataStart < count * elemBytes)
    return R::failure("'" + path + "': data is truncated (" +
                      std::to_string(bytes.size() - dataStart) + " bytes for " +
                      std::to_string(count) + " elements)");
  const char *p = bytes.data() + dataStart;
  if (descr == "<f8") {
    t.data.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      double v;
      std::memcpy(&v, p + 8 * i, 8);
      t.data[i] = float(v);
    }
  } else {
    t.data.resize(count * (complex ? 2 : 1));
    std::memcpy(t.data.data(), p, t.data.size() * 4);
  }
  if (isComplex)
    *isComplex = complex;
  if (dtype)
    *dtype = descr == "<f4"   ? "float32"
             : descr == "<f8" ? "float64"
                              : "complex64";
  return t;
}

rt::Status seamrun::writeNpy(const std::string &path, const rt::HostTensor &t,
                             bool complex) {
  std::string shape = "(";
  for (int64_t d : t.shape)
    shape += std::to_string(d) + ", ";
  if (t.shape.size() > 1)
    shape.erase(shape.size() - 2);
  else if (t.shape.size() == 1)
    shape.erase(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") + (complex ? "<c8" : "<f4") +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return rt::Status::failure("cannot write '" + path + "'");
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = uint16_t(header.size());
  out.put(char(len & 0xff)).put(char(len >> 8));
  out << header;
  out.write(reinterpret_cast<const char *>(t.data.data()),
            std::streamsize(t.data.size() * sizeof(float)));
  if (!out)
    return rt::Status::failure("write to '" + path + "' failed");
  return rt::Status::ok();
}
