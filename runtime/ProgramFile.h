//===- ProgramFile.h - Versioned binary program files ----------*- C++ -*-===//
//
// Layout (little endian):
//   header  magic "SEAMPRG\0" | u32 version | u32 target | u64 payload size |
//           u64 content hash (hash64 of the payload, runtime/Numerics.h) |
//           u32 checksum (CRC-32 of header bytes [0,32)) | u32 section count |
//           u64 reserved
// (Version 3 had FNV-1a 64 as the content hash and a CRC-32 over the
// payload too: byte-serial passes over several MB that took a quarter of a
// cold compile's cache phase.)
//   payload sections, each u32 tag | u32 reserved | u64 size | bytes:
//           meta (program name), bindings, constants, one stream per engine.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_PROGRAMFILE_H
#define SEAM_RUNTIME_PROGRAMFILE_H

#include "runtime/Expected.h"
#include "runtime/Program.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace seam::rt {

constexpr uint32_t kProgramFormatVersion = 4;
constexpr size_t kProgramHeaderSize = 48;

/// Serialises `program` (no validation beyond what the format can hold).
std::vector<uint8_t> writeProgram(const Program &program);

/// Decodes and validates a program file: magic, version, target, every size
/// and count against the remaining bytes, checksum, content hash, every enum
/// value against Isa.def, and every access pattern against the memory
/// capacities of the target's built-in profile. Never reads out of bounds.
Expected<Program> readProgram(const std::vector<uint8_t> &bytes);
Expected<Program> readProgram(const uint8_t *data, size_t size);

/// Recomputes the content hash and checksum of a program file's header from
/// its bytes (for tests and fuzzers that edit a payload on purpose, to
/// reach the validation behind them). Files shorter than a header are left
/// as they are.
void resealProgramFile(std::vector<uint8_t> &bytes);

/// Content hash recorded in the header of `writeProgram(program)`.
uint64_t programHash(const Program &program);

Status writeProgramFile(const Program &program, const std::string &path);
Expected<Program> readProgramFile(const std::string &path);

/// Human-readable listing of bindings, constants and streams.
void dumpProgram(const Program &program, std::ostream &os);
std::string formatAccessPattern(const Program &program,
                                const AccessPattern &ap);

} // namespace seam::rt

#endif // SEAM_RUNTIME_PROGRAMFILE_H
