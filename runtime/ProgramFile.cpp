//===- ProgramFile.cpp - Program file writer, reader and dump -------------===//

#include "runtime/ProgramFile.h"
#include "runtime/Numerics.h"
#include "runtime/Profile.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace seam::rt {

namespace {
constexpr char kMagic[8] = {'S', 'E', 'A', 'M', 'P', 'R', 'G', '\0'};
enum SectionTag : uint32_t {
  kMeta = 1,
  kBindings = 2,
  kConstants = 3,
  kStream = 4,
};

/// Appends to a buffer that grows geometrically and is trimmed by take():
/// a program of tens of thousands of instructions is several MB written a
/// few bytes at a time, and a vector resized per field paid a call for each.
/// A counter() only counts: the same writing code gives the exact size to
/// reserve.
class ByteWriter {
public:
  explicit ByteWriter(size_t reserve = 0) : buf(reserve) {}
  static ByteWriter counter() {
    ByteWriter w;
    w.countOnly = true;
    return w;
  }
  size_t size() const { return len; }
  const uint8_t *data() const { return buf.data(); }
  template <typename T> void put(T v) { putRaw(&v, sizeof(T)); }
  /// Overwrites a value put earlier at byte `at`.
  template <typename T> void patch(size_t at, T v) {
    if (!countOnly)
      std::memcpy(buf.data() + at, &v, sizeof(T));
  }
  void putRaw(const void *p, size_t n) {
    if (countOnly)
      len += n;
    else if (n)
      std::memcpy(grow(n), p, n);
  }
  void putString(const std::string &s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    putRaw(s.data(), s.size());
  }
  void putBytes(const std::vector<uint8_t> &b) {
    put<uint64_t>(b.size());
    putRaw(b.data(), b.size());
  }
  std::vector<uint8_t> take() {
    buf.resize(len);
    return std::move(buf);
  }

private:
  uint8_t *grow(size_t n) {
    if (len + n > buf.size())
      buf.resize(std::max(2 * buf.size(), len + n));
    uint8_t *p = buf.data() + len;
    len += n;
    return p;
  }
  std::vector<uint8_t> buf;
  size_t len = 0;
  bool countOnly = false;
};

/// Bounds-checked reader: every get fails cleanly past the end.
class ByteReader {
public:
  ByteReader(const uint8_t *data, size_t size) : data(data), size(size) {}
  size_t remaining() const { return size - pos; }
  size_t position() const { return pos; }
  template <typename T> bool get(T &v) {
    if (remaining() < sizeof(T))
      return false;
    std::memcpy(&v, data + pos, sizeof(T));
    pos += sizeof(T);
    return true;
  }
  bool getString(std::string &s, size_t maxLen = 1 << 20) {
    uint32_t n;
    if (!get(n) || n > remaining() || n > maxLen)
      return false;
    s.assign(reinterpret_cast<const char *>(data + pos), n);
    pos += n;
    return true;
  }
  bool getBytes(std::vector<uint8_t> &b) {
    uint64_t n;
    if (!get(n) || n > remaining())
      return false;
    b.assign(data + pos, data + pos + n);
    pos += n;
    return true;
  }

private:
  const uint8_t *data;
  size_t size;
  size_t pos = 0;
};

void writeAp(ByteWriter &w, const AccessPattern &ap) {
  w.put<uint8_t>(static_cast<uint8_t>(ap.space));
  w.put<uint8_t>(static_cast<uint8_t>(ap.dtype));
  w.put<uint8_t>(ap.numDims);
  w.put<uint32_t>(ap.binding);
  w.put<int64_t>(ap.offset);
  w.put<uint32_t>(ap.partitionStart);
  w.put<uint32_t>(ap.partitions);
  w.put<int64_t>(ap.partitionStride);
  for (unsigned d = 0; d < ap.numDims && d < kMaxFreeDims; ++d) {
    w.put<uint32_t>(ap.dims[d].size);
    w.put<int64_t>(ap.dims[d].stride);
  }
  for (int64_t s : ap.loopStep)
    w.put<int64_t>(s);
}

void writeInstruction(ByteWriter &w, const Instruction &inst) {
  w.put<uint8_t>(static_cast<uint8_t>(inst.op));
  w.put<uint8_t>(static_cast<uint8_t>(inst.engine));
  w.put<uint8_t>(inst.apMask);
  w.put<uint8_t>(static_cast<uint8_t>(inst.act));
  w.put<uint8_t>(static_cast<uint8_t>(inst.alu));
  w.put<uint8_t>((inst.accumulate ? 1 : 0) | (inst.reverse ? 2 : 0) |
                 (inst.secondOp ? 4 : 0));
  w.put<uint8_t>(static_cast<uint8_t>(inst.alu1));
  w.put<int8_t>(inst.startLevel);
  w.put<float>(inst.scale);
  w.put<float>(inst.bias);
  w.put<float>(inst.scalar);
  w.put<float>(inst.scalar1);
  w.put<float>(inst.affineConst);
  w.put<float>(inst.partitionCoef);
  w.put<float>(inst.freeCoef);
  w.put<uint32_t>(inst.tripCount);
  w.put<int32_t>(inst.signalSem);
  w.put<uint32_t>(inst.signalCount);
  w.put<uint8_t>(static_cast<uint8_t>(inst.waits.size()));
  for (const SemWaitSpec &ws : inst.waits) {
    w.put<uint16_t>(ws.sem);
    w.put<uint32_t>(ws.value);
    for (int32_t s : ws.step)
      w.put<int32_t>(s);
    w.put<uint8_t>(ws.carried);
  }
  for (unsigned s = 0; s < Instruction::NumSlots; ++s)
    if (inst.has(Instruction::Slot(s)))
      writeAp(w, inst.aps[s]);
}

/// Appends the payload to `w`, each section written in place (its size
/// patched after its body): a program of tens of thousands of instructions
/// is several MB, and every extra copy of it touches fresh pages.
void writePayloadInto(ByteWriter &w, const Program &p, uint32_t &sections) {
  sections = 0;
  auto section = [&](uint32_t tag, auto &&body) {
    w.put<uint32_t>(tag);
    w.put<uint32_t>(0);
    size_t sizeAt = w.size();
    w.put<uint64_t>(0);
    size_t start = w.size();
    body();
    w.patch<uint64_t>(sizeAt, w.size() - start);
    ++sections;
  };
  section(kMeta, [&] { w.putString(p.name); });

  section(kBindings, [&] {
    w.put<uint32_t>(static_cast<uint32_t>(p.bindings.size()));
    for (const Binding &b : p.bindings) {
      w.putString(b.name);
      w.put<uint8_t>(static_cast<uint8_t>(b.dtype));
      w.put<uint8_t>(static_cast<uint8_t>(b.role));
      w.put<uint32_t>(static_cast<uint32_t>(b.shape.size()));
      for (int64_t d : b.shape)
        w.put<int64_t>(d);
      w.put<uint64_t>(b.hbmOffset);
      w.put<uint64_t>(b.hbmSize);
    }
  });

  section(kConstants, [&] {
    w.put<uint32_t>(static_cast<uint32_t>(p.constants.size()));
    for (const Constant &c : p.constants) {
      w.put<uint32_t>(c.binding);
      w.put<uint8_t>(static_cast<uint8_t>(c.kind));
      w.put<uint64_t>(c.seed);
      w.put<float>(c.scale);
      w.putBytes(c.bytes);
    }
  });

  for (unsigned e = 0; e < kNumEngines; ++e) {
    if (p.streams[e].empty())
      continue;
    section(kStream, [&] {
      w.put<uint8_t>(static_cast<uint8_t>(e));
      w.put<uint32_t>(static_cast<uint32_t>(p.streams[e].size()));
      for (const Instruction &inst : p.streams[e])
        writeInstruction(w, inst);
    });
  }
}

/// The payload's exact size: the writing code run on a counter.
size_t encodedPayloadSize(const Program &p) {
  ByteWriter counter = ByteWriter::counter();
  uint32_t sections;
  writePayloadInto(counter, p, sections);
  return counter.size();
}

std::vector<uint8_t> writePayload(const Program &p, uint32_t &sections) {
  ByteWriter w(encodedPayloadSize(p));
  writePayloadInto(w, p, sections);
  return w.take();
}

/// Decoder for the payload; `error` names what is wrong.
class Decoder {
public:
  std::string error;

  bool fail(const std::string &m) {
    error = m;
    return false;
  }

  bool readAp(ByteReader &r, AccessPattern &ap, const std::string &where) {
    uint8_t space, dtype, numDims;
    if (!r.get(space) || !r.get(dtype) || !r.get(numDims))
      return fail(where + ": truncated access pattern");
    auto s = decodeMemSpace(space);
    if (!s)
      return fail(where + ": unknown memory space " + std::to_string(space));
    auto t = decodeDType(dtype);
    if (!t)
      return fail(where + ": unknown dtype " + std::to_string(dtype));
    if (numDims < 1 || numDims > kMaxFreeDims)
      return fail(where + ": " + std::to_string(numDims) + " free dims (1.." +
                  std::to_string(kMaxFreeDims) + " allowed)");
    ap.space = *s;
    ap.dtype = *t;
    ap.numDims = numDims;
    if (!r.get(ap.binding) || !r.get(ap.offset) || !r.get(ap.partitionStart) ||
        !r.get(ap.partitions) || !r.get(ap.partitionStride))
      return fail(where + ": truncated access pattern");
    for (unsigned d = 0; d < numDims; ++d)
      if (!r.get(ap.dims[d].size) || !r.get(ap.dims[d].stride))
        return fail(where + ": truncated access pattern");
    for (int64_t &st : ap.loopStep)
      if (!r.get(st))
        return fail(where + ": truncated access pattern");
    // Keep later arithmetic far from overflow.
    const int64_t lim = int64_t(1) << 48;
    auto big = [&](int64_t v) { return v > lim || v < -lim; };
    if (big(ap.offset) || big(ap.partitionStride))
      return fail(where + ": offset or stride out of range");
    for (unsigned d = 0; d < numDims; ++d)
      if (big(ap.dims[d].stride) || ap.dims[d].size > (1u << 24))
        return fail(where + ": free dim out of range");
    for (int64_t st : ap.loopStep)
      if (big(st))
        return fail(where + ": loop step out of range");
    return true;
  }

  bool readInstruction(ByteReader &r, Instruction &inst,
                       const std::string &where) {
    uint8_t op, engine, mask, act, alu, flags, alu1, numWaits;
    int8_t startLevel;
    if (!r.get(op) || !r.get(engine) || !r.get(mask) || !r.get(act) ||
        !r.get(alu) || !r.get(flags) || !r.get(alu1) || !r.get(startLevel))
      return fail(where + ": truncated instruction");
    if (startLevel < -1 || startLevel >= int(kMaxLoopDepth))
      return fail(where + ": start level " + std::to_string(startLevel) +
                  " out of range");
    inst.startLevel = startLevel;
    auto o = decodeOpcode(op);
    if (!o)
      return fail(where + ": unknown opcode " + std::to_string(op));
    auto e = decodeEngine(engine);
    if (!e)
      return fail(where + ": unknown engine " + std::to_string(engine));
    auto a = decodeActFunc(act);
    if (!a)
      return fail(where + ": unknown activation function " +
                  std::to_string(act));
    auto l = decodeAluOp(alu);
    if (!l)
      return fail(where + ": unknown ALU op " + std::to_string(alu));
    if (mask >= (1u << Instruction::NumSlots))
      return fail(where + ": unknown operand slots in mask " +
                  std::to_string(mask));
    if (flags > 7)
      return fail(where + ": unknown flag bits " + std::to_string(flags));
    auto l1 = decodeAluOp(alu1);
    if (!l1)
      return fail(where + ": unknown second ALU op " + std::to_string(alu1));
    inst.op = *o;
    inst.engine = *e;
    inst.apMask = mask;
    inst.act = *a;
    inst.alu = *l;
    inst.accumulate = flags & 1;
    inst.reverse = flags & 2;
    inst.secondOp = flags & 4;
    inst.alu1 = *l1;
    if (!r.get(inst.scale) || !r.get(inst.bias) || !r.get(inst.scalar) ||
        !r.get(inst.scalar1) || !r.get(inst.affineConst) ||
        !r.get(inst.partitionCoef) || !r.get(inst.freeCoef) ||
        !r.get(inst.tripCount) || !r.get(inst.signalSem) ||
        !r.get(inst.signalCount) || !r.get(numWaits))
      return fail(where + ": truncated instruction");
    if (numWaits > kMaxWaits)
      return fail(where + ": " + std::to_string(numWaits) +
                  " semaphore waits (at most " + std::to_string(kMaxWaits) +
                  ")");
    inst.waits.resize(numWaits);
    for (SemWaitSpec &ws : inst.waits) {
      if (!r.get(ws.sem) || !r.get(ws.value))
        return fail(where + ": truncated semaphore wait");
      for (int32_t &s : ws.step)
        if (!r.get(s))
          return fail(where + ": truncated semaphore wait");
      if (!r.get(ws.carried))
        return fail(where + ": truncated semaphore wait");
    }
    static const char *slotNames[] = {"dst", "src0", "src1", "aux"};
    for (unsigned s = 0; s < Instruction::NumSlots; ++s)
      if (inst.has(Instruction::Slot(s)) &&
          !readAp(r, inst.aps[s], where + " operand " + slotNames[s]))
        return false;
    return true;
  }

  bool readBindings(ByteReader &r, Program &p) {
    uint32_t count;
    if (!r.get(count))
      return fail("bindings section: truncated count");
    // Each binding needs at least 30 bytes: reject counts the data cannot hold.
    if (uint64_t(count) * 30 > r.remaining())
      return fail("bindings section: count " + std::to_string(count) +
                  " exceeds the section size");
    p.bindings.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      Binding &b = p.bindings[i];
      std::string where = "binding " + std::to_string(i);
      uint8_t dtype, role;
      uint32_t rank;
      if (!r.getString(b.name) || !r.get(dtype) || !r.get(role) || !r.get(rank))
        return fail(where + ": truncated");
      auto t = decodeDType(dtype);
      if (!t)
        return fail(where + " ('" + b.name + "'): unknown dtype " +
                    std::to_string(dtype));
      if (role > static_cast<uint8_t>(BindingRole::Scratch))
        return fail(where + " ('" + b.name + "'): unknown role " +
                    std::to_string(role));
      if (rank > 16 || uint64_t(rank) * 8 > r.remaining())
        return fail(where + " ('" + b.name + "'): rank " +
                    std::to_string(rank) + " out of range");
      b.dtype = *t;
      b.role = static_cast<BindingRole>(role);
      b.shape.resize(rank);
      __int128 elems = 1;
      for (int64_t &d : b.shape) {
        if (!r.get(d))
          return fail(where + ": truncated shape");
        if (d < 0 || d > (int64_t(1) << 40))
          return fail(where + " ('" + b.name + "'): dimension " +
                      std::to_string(d) + " out of range");
        elems *= d;
        if (elems > (__int128(1) << 48))
          return fail(where + " ('" + b.name + "'): too many elements");
      }
      if (!r.get(b.hbmOffset) || !r.get(b.hbmSize))
        return fail(where + ": truncated");
    }
    return true;
  }

  bool readConstants(ByteReader &r, Program &p) {
    uint32_t count;
    if (!r.get(count))
      return fail("constants section: truncated count");
    if (uint64_t(count) * 25 > r.remaining())
      return fail("constants section: count " + std::to_string(count) +
                  " exceeds the section size");
    p.constants.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      Constant &c = p.constants[i];
      uint8_t kind;
      if (!r.get(c.binding) || !r.get(kind) || !r.get(c.seed) ||
          !r.get(c.scale) || !r.getBytes(c.bytes))
        return fail("constant " + std::to_string(i) + ": truncated");
      if (kind > static_cast<uint8_t>(ConstantKind::SeededNormal))
        return fail("constant " + std::to_string(i) + ": unknown kind " +
                    std::to_string(kind));
      c.kind = static_cast<ConstantKind>(kind);
    }
    return true;
  }

  bool readStream(ByteReader &r, Program &p) {
    uint8_t engine;
    uint32_t count;
    if (!r.get(engine) || !r.get(count))
      return fail("stream section: truncated");
    auto e = decodeEngine(engine);
    if (!e)
      return fail("stream section: unknown engine " + std::to_string(engine));
    auto &stream = p.streams[engine];
    if (!stream.empty())
      return fail(std::string("stream section: second stream for engine ") +
                  std::string(name(*e)));
    // Smallest instruction encoding is 46 bytes.
    if (uint64_t(count) * 46 > r.remaining())
      return fail(std::string(name(*e)) + " stream: count " +
                  std::to_string(count) + " exceeds the section size");
    stream.resize(count);
    for (uint32_t i = 0; i < count; ++i)
      if (!readInstruction(r, stream[i],
                           std::string(name(*e)) + " instruction " +
                               std::to_string(i)))
        return false;
    return true;
  }
};
} // namespace

std::vector<uint8_t> writeProgram(const Program &program) {
  // The header, its payload size and section count patched once the
  // payload has been written after it (in the same buffer), then sealed
  // (content hash and checksum) by resealProgramFile.
  size_t reserved = kProgramHeaderSize + encodedPayloadSize(program);
  ByteWriter h(reserved);
  h.putRaw(kMagic, 8);
  h.put<uint32_t>(kProgramFormatVersion);
  h.put<uint32_t>(static_cast<uint32_t>(program.target));
  size_t sizeAt = h.size();
  h.put<uint64_t>(0);
  h.put<uint64_t>(0); // content hash
  h.put<uint32_t>(0); // checksum
  size_t sectionsAt = h.size();
  h.put<uint32_t>(0);
  h.put<uint64_t>(0);
  uint32_t sections;
  writePayloadInto(h, program, sections);
  assert(h.size() == reserved && "the counter and the writer disagree");
  (void)reserved;
  h.patch<uint64_t>(sizeAt, h.size() - kProgramHeaderSize);
  h.patch<uint32_t>(sectionsAt, sections);
  std::vector<uint8_t> bytes = h.take();
  resealProgramFile(bytes);
  return bytes;
}

void resealProgramFile(std::vector<uint8_t> &bytes) {
  if (bytes.size() < kProgramHeaderSize)
    return;
  uint64_t hash = hash64(bytes.data() + kProgramHeaderSize,
                         bytes.size() - kProgramHeaderSize);
  std::memcpy(bytes.data() + 24, &hash, 8);
  uint32_t crc = crc32(bytes.data(), 32);
  std::memcpy(bytes.data() + 32, &crc, 4);
}

uint64_t programHash(const Program &program) {
  uint32_t sections;
  std::vector<uint8_t> payload = writePayload(program, sections);
  return hash64(payload.data(), payload.size());
}

Expected<Program> readProgram(const std::vector<uint8_t> &bytes) {
  return readProgram(bytes.data(), bytes.size());
}

Expected<Program> readProgram(const uint8_t *data, size_t size) {
  auto fail = [](const std::string &m) {
    return Expected<Program>::failure("program file: " + m);
  };
  if (size < kProgramHeaderSize)
    return fail("truncated: " + std::to_string(size) +
                " bytes, the header alone needs " +
                std::to_string(kProgramHeaderSize));
  if (std::memcmp(data, kMagic, 8) != 0)
    return fail("bad magic (not a seam program file)");
  ByteReader h(data + 8, kProgramHeaderSize - 8);
  uint32_t version, target, checksum, sections;
  uint64_t payloadSize, hash, reserved;
  h.get(version);
  h.get(target);
  h.get(payloadSize);
  h.get(hash);
  h.get(checksum);
  h.get(sections);
  h.get(reserved);
  if (version != kProgramFormatVersion)
    return fail("unsupported format version " + std::to_string(version) +
                " (this runtime reads version " +
                std::to_string(kProgramFormatVersion) + ")");
  auto t = decodeTarget(target);
  if (!t)
    return fail("unknown target code " + std::to_string(target));
  size_t available = size - kProgramHeaderSize;
  if (payloadSize != available)
    return fail(
        payloadSize > available
            ? "truncated: header announces " + std::to_string(payloadSize) +
                  " payload bytes, file has " + std::to_string(available)
            : "trailing bytes: header announces " +
                  std::to_string(payloadSize) + " payload bytes, file has " +
                  std::to_string(available));
  const uint8_t *payload = data + kProgramHeaderSize;
  uint32_t crc = crc32(data, 32);
  if (crc != checksum) {
    std::ostringstream os;
    os << "checksum mismatch (stored 0x" << std::hex << checksum
       << ", computed 0x" << crc << "): the file is corrupted";
    return fail(os.str());
  }
  if (hash64(payload, payloadSize) != hash)
    return fail("content hash mismatch: the file is corrupted");
  if (reserved != 0)
    return fail("reserved header field is not zero");

  Program p;
  p.target = *t;
  Decoder dec;
  ByteReader r(payload, payloadSize);
  bool sawMeta = false, sawBindings = false, sawConstants = false;
  for (uint32_t s = 0; s < sections; ++s) {
    uint32_t tag, pad;
    uint64_t len;
    if (!r.get(tag) || !r.get(pad) || !r.get(len))
      return fail("section " + std::to_string(s) + ": truncated header");
    if (len > r.remaining())
      return fail("section " + std::to_string(s) + ": size " +
                  std::to_string(len) + " exceeds the " +
                  std::to_string(r.remaining()) + " bytes left");
    ByteReader body(payload + r.position(), len);
    for (uint64_t i = 0; i < len; ++i) {
      uint8_t skip;
      r.get(skip);
    }
    bool ok = true;
    switch (tag) {
    case kMeta:
      sawMeta = true;
      ok = body.getString(p.name, 4096) || dec.fail("meta section truncated");
      break;
    case kBindings:
      sawBindings = true;
      ok = dec.readBindings(body, p);
      break;
    case kConstants:
      sawConstants = true;
      ok = dec.readConstants(body, p);
      break;
    case kStream:
      ok = dec.readStream(body, p);
      break;
    default:
      return fail("section " + std::to_string(s) + ": unknown tag " +
                  std::to_string(tag));
    }
    if (!ok)
      return fail(dec.error);
    if (body.remaining() != 0)
      return fail("section " + std::to_string(s) + " has " +
                  std::to_string(body.remaining()) + " unread bytes");
  }
  if (r.remaining() != 0)
    return fail(std::to_string(r.remaining()) +
                " bytes after the last section");
  if (!sawMeta || !sawBindings || !sawConstants)
    return fail("missing meta, bindings or constants section");
  const Profile &profile = Profile::builtin(p.target);
  MemoryLimits limits = profile.memoryLimits();
  for (const Binding &b : p.bindings)
    if (b.hbmOffset > profile.hbmBytes || b.hbmSize > profile.hbmBytes ||
        b.hbmOffset + b.hbmSize > profile.hbmBytes)
      return fail("binding '" + b.name + "' lies beyond the " +
                  std::to_string(profile.hbmBytes) + " bytes of HBM");
  if (Status valid = verifyProgram(p, &limits); !valid)
    return fail(valid.error());
  return p;
}

Status writeProgramFile(const Program &program, const std::string &path) {
  std::vector<uint8_t> bytes = writeProgram(program);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return Status::failure("cannot open " + path + " for writing");
  out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  if (!out)
    return Status::failure("cannot write " + path);
  return Status::ok();
}

Expected<Program> readProgramFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Expected<Program>::failure("program file " + path + ": cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  return readProgram(bytes);
}

//===----------------------------------------------------------------------===//
// Text dump
//===----------------------------------------------------------------------===//

std::string formatAccessPattern(const Program &program,
                                const AccessPattern &ap) {
  std::ostringstream os;
  os << name(ap.space) << "<" << name(ap.dtype) << ">";
  if (ap.space == MemSpace::Hbm) {
    os << "("
       << (ap.binding < program.bindings.size()
               ? program.bindings[ap.binding].name
               : "#" + std::to_string(ap.binding))
       << " +" << ap.offset << "B, rows " << ap.partitions << " x "
       << ap.partitionStride;
  } else {
    os << "(p" << ap.partitionStart << ":" << ap.partitionStart + ap.partitions
       << " +" << ap.offset << "B";
  }
  os << ", [";
  for (unsigned d = 0; d < ap.numDims && d < kMaxFreeDims; ++d)
    os << (d ? ", " : "") << ap.dims[d].size << ":" << ap.dims[d].stride;
  os << "]";
  bool anyStep = false;
  for (int64_t s : ap.loopStep)
    anyStep |= s != 0;
  if (anyStep) {
    os << ", loop step B [";
    for (unsigned d = 0; d < kMaxLoopDepth; ++d)
      os << (d ? ", " : "") << ap.loopStep[d];
    os << "]";
  }
  os << ")";
  return os.str();
}

void dumpProgram(const Program &p, std::ostream &os) {
  os << "program '" << p.name << "' target " << name(p.target) << ", "
     << p.instructionCount() << " instructions, " << p.hbmBytes()
     << " HBM bytes, hash " << std::hex << std::setw(16) << std::setfill('0')
     << programHash(p) << std::dec << std::setfill(' ') << "\n";
  for (size_t i = 0; i < p.bindings.size(); ++i) {
    const Binding &b = p.bindings[i];
    os << "  binding #" << i << " " << name(b.role) << " '" << b.name << "' "
       << name(b.dtype) << "[";
    for (size_t d = 0; d < b.shape.size(); ++d)
      os << (d ? "x" : "") << b.shape[d];
    os << "] hbm @" << b.hbmOffset << " size " << b.hbmSize << "\n";
  }
  for (const Constant &c : p.constants) {
    os << "  constant -> #" << c.binding << " " << name(c.kind);
    if (c.kind == ConstantKind::Raw)
      os << " " << c.bytes.size() << " bytes";
    else
      os << " seed " << c.seed << " scale " << c.scale;
    os << "\n";
  }
  for (unsigned e = 0; e < kNumEngines; ++e) {
    if (p.streams[e].empty())
      continue;
    os << "  stream " << name(Engine(e)) << " (" << p.streams[e].size()
       << ")\n";
    unsigned depth = 0;
    static const char *slotNames[] = {"dst", "src0", "src1", "aux"};
    for (size_t i = 0; i < p.streams[e].size(); ++i) {
      const Instruction &inst = p.streams[e][i];
      if (inst.op == Opcode::LoopEnd && depth > 0)
        --depth;
      os << "    " << std::setw(4) << i << "  " << std::string(2 * depth, ' ')
         << mnemonic(inst.op);
      switch (inst.op) {
      case Opcode::LoopBegin:
        os << " x" << inst.tripCount;
        ++depth;
        break;
      case Opcode::Activation:
        os << " " << name(inst.act) << " scale=" << inst.scale
           << " bias=" << inst.bias;
        break;
      case Opcode::TensorTensor:
      case Opcode::TensorReduce:
      case Opcode::AllReduce:
        os << " " << name(inst.alu);
        break;
      case Opcode::TensorScalar:
        os << " " << name(inst.alu) << " " << inst.scalar
           << (inst.reverse ? " reversed" : "");
        if (inst.secondOp)
          os << " then " << name(inst.alu1) << " " << inst.scalar1;
        break;
      case Opcode::Matmul:
        os << (inst.accumulate ? " accumulate" : "");
        if (inst.accumulate && inst.startLevel >= 0)
          os << " (start at i" << int(inst.startLevel) << "=0)";
        break;
      case Opcode::Iota:
      case Opcode::AffineSelect:
        os << " " << inst.affineConst << " + " << inst.partitionCoef << "*p + "
           << inst.freeCoef << "*i";
        if (inst.op == Opcode::AffineSelect)
          os << " " << name(inst.alu) << " 0 else " << inst.scalar;
        break;
      case Opcode::Memset:
        os << " " << inst.scalar;
        break;
      default:
        break;
      }
      for (unsigned s = 0; s < Instruction::NumSlots; ++s)
        if (inst.has(Instruction::Slot(s)))
          os << " " << slotNames[s] << "="
             << formatAccessPattern(p, inst.aps[s]);
      for (const SemWaitSpec &w : inst.waits) {
        os << " wait(s" << w.sem << ">=" << w.value;
        for (unsigned d = 0; d < kMaxLoopDepth; ++d)
          if (w.step[d])
            os << "+" << w.step[d] << "*i" << d;
        if (w.carried)
          os << " carried " << unsigned(w.carried);
        os << ")";
      }
      if (inst.signalSem >= 0)
        os << " signal(s" << inst.signalSem << "+=" << inst.signalCount << ")";
      os << "\n";
    }
  }
}

} // namespace seam::rt
