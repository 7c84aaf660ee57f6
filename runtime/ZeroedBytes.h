//===- ZeroedBytes.h - zero-filled bytes that cost nothing -*- C++ -*-===//
//-*-===//
//
// The functional machine's memories (24 MiB of SBUF per core, HBM per chip)
// start as zeros, but a launch touches a small part of them. std::vector
// writes every byte to zero them; calloc of a large block gets fresh pages
// from the kernel that are zero already and only materialise when touched.
// With it a device that runs a small program costs what the program touches,
// not the size of the machine (the program-loader fuzzer ran 2x faster).
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_RUNTIME_ZEROEDBYTES_H
#define SEAM_RUNTIME_ZEROEDBYTES_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace seam::rt {

class ZeroedBytes {
public:
  ZeroedBytes() = default;
  ZeroedBytes(const ZeroedBytes &) = delete;
  ZeroedBytes &operator=(const ZeroedBytes &) = delete;
  ZeroedBytes(ZeroedBytes &&o) noexcept
      : bytes(std::exchange(o.bytes, nullptr)),
        count(std::exchange(o.count, 0)) {}
  ZeroedBytes &operator=(ZeroedBytes &&o) noexcept {
    std::swap(bytes, o.bytes);
    std::swap(count, o.count);
    return *this;
  }
  ~ZeroedBytes() { std::free(bytes); }

  /// Grows to `n` bytes (never shrinks); old bytes are kept, new ones zero.
  void grow(size_t n) {
    if (n <= count)
      return;
    auto *fresh = static_cast<uint8_t *>(std::calloc(n, 1));
    if (!fresh)
      throw std::bad_alloc();
    if (count)
      std::memcpy(fresh, bytes, count);
    std::free(bytes);
    bytes = fresh;
    count = n;
  }
  void zero() {
    if (count)
      std::memset(bytes, 0, count);
  }

  uint8_t *data() { return bytes; }
  const uint8_t *data() const { return bytes; }
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  uint8_t &operator[](size_t i) { return bytes[i]; }
  uint8_t operator[](size_t i) const { return bytes[i]; }

private:
  uint8_t *bytes = nullptr;
  size_t count = 0;
};

} // namespace seam::rt

#endif // SEAM_RUNTIME_ZEROEDBYTES_H
