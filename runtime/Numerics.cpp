//===- Numerics.cpp - Scalar semantics of the emulated engines ------------===//

#include "runtime/Numerics.h"

#include <array>
#include <cstring>
#include <limits>

namespace seam::rt {

float applyActivation(ActFunc func, float x) {
  switch (func) {
  case ActFunc::Identity:
    return x;
  case ActFunc::Exp:
    return std::exp(x);
  case ActFunc::Gelu:
    return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
  case ActFunc::GeluTanh: {
    const float k = 0.7978845608028654f; // sqrt(2/pi)
    return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
  }
  case ActFunc::Silu:
    return x / (1.0f + std::exp(-x));
  case ActFunc::Tanh:
    return std::tanh(x);
  case ActFunc::Sigmoid:
    return 1.0f / (1.0f + std::exp(-x));
  case ActFunc::Relu:
    return x > 0.0f ? x : 0.0f;
  case ActFunc::Rsqrt:
    return 1.0f / std::sqrt(x);
  case ActFunc::Square:
    return x * x;
  case ActFunc::Sqrt:
    return std::sqrt(x);
  case ActFunc::Sin:
    return std::sin(x);
  case ActFunc::Cos:
    return std::cos(x);
  }
  return std::numeric_limits<float>::quiet_NaN();
}

float applyAlu(AluOp op, float a, float b) {
  switch (op) {
  case AluOp::Add:
    return a + b;
  case AluOp::Subtract:
    return a - b;
  case AluOp::Multiply:
    return a * b;
  case AluOp::Max:
    return a > b ? a : b;
  case AluOp::Min:
    return a < b ? a : b;
  case AluOp::Divide:
    return a / b;
  case AluOp::Bypass:
    return a;
  case AluOp::IsEqual:
    return a == b ? 1.0f : 0.0f;
  case AluOp::IsGe:
    return a >= b ? 1.0f : 0.0f;
  }
  return std::numeric_limits<float>::quiet_NaN();
}

float reductionIdentity(AluOp op) {
  switch (op) {
  case AluOp::Multiply:
    return 1.0f;
  case AluOp::Max:
    return -std::numeric_limits<float>::infinity();
  case AluOp::Min:
    return std::numeric_limits<float>::infinity();
  default:
    return 0.0f;
  }
}

static uint64_t loadWord(const uint8_t *p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
    w = __builtin_bswap64(w);
  return w;
}

static uint64_t rotl64(uint64_t x, unsigned r) {
  return (x << r) | (x >> (64 - r));
}

uint64_t hash64(const void *data, size_t size, uint64_t seed) {
  constexpr uint64_t kMulA = 0xbf58476d1ce4e5b9ull,
                     kMulB = 0x94d049bb133111ebull,
                     kGolden = 0x9e3779b97f4a7c15ull;
  const auto *p = static_cast<const uint8_t *>(data);
  // Four independent lanes: the multiply latency of one word overlaps the
  // other three.
  uint64_t lane[4] = {seed + kGolden, seed + 2 * kGolden, seed + 3 * kGolden,
                      seed + 4 * kGolden};
  size_t n = size;
  for (; n >= 32; n -= 32, p += 32)
    for (unsigned k = 0; k < 4; ++k)
      lane[k] = rotl64(lane[k] ^ (loadWord(p + 8 * k) * kMulA), 29) * kMulB;
  uint64_t h = rotl64(lane[0], 1) + rotl64(lane[1], 17) + rotl64(lane[2], 33) +
               rotl64(lane[3], 49) + uint64_t(size) * kGolden;
  for (; n >= 8; n -= 8, p += 8)
    h = rotl64(h ^ (loadWord(p) * kMulA), 29) * kMulB;
  if (n > 0) {
    uint64_t tail = 0;
    for (size_t i = 0; i < n; ++i)
      tail |= uint64_t(p[i]) << (8 * i);
    h = rotl64(h ^ ((tail + n) * kMulA), 29) * kMulB;
  }
  h ^= h >> 30;
  h *= kMulA;
  h ^= h >> 27;
  h *= kMulB;
  return h ^ (h >> 31);
}

/// CRC-32 tables for slicing by eight: table[0] is the bytewise table,
/// table[k][b] the CRC of byte b followed by k zero bytes, so that eight
/// input bytes fold into the CRC with eight independent lookups (the
/// bytewise loop waits for one lookup per byte: a multi-MB program file
/// took tens of ms).
static std::array<std::array<uint32_t, 256>, 8> makeCrcTables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i)
    for (unsigned k = 1; k < 8; ++k)
      t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  return t;
}

uint32_t crc32(const void *data, size_t size, uint32_t crc) {
  static const std::array<std::array<uint32_t, 256>, 8> t = makeCrcTables();
  const auto *p = static_cast<const uint8_t *>(data);
  crc = ~crc;
  for (; size >= 8; size -= 8, p += 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    if constexpr (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) {
      lo = __builtin_bswap32(lo);
      hi = __builtin_bswap32(hi);
    }
    lo ^= crc;
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^
          t[4][lo >> 24] ^ t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
          t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
  }
  for (; size > 0; --size, ++p)
    crc = t[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
  return ~crc;
}

} // namespace seam::rt
