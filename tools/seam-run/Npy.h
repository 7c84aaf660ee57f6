//===- Npy.h - .npy tensors in and out of seam-run --------------*- C++ -*-===//
#ifndef SEAM_TOOLS_SEAM_RUN_NPY_H
#define SEAM_TOOLS_SEAM_RUN_NPY_H

#include "runtime/Expected.h"
#include "runtime/Host.h"
#include <string>

namespace seamrun {

/// Reads a C-order .npy of float32, float64 (converted) or complex64
/// (interleaved re/im). Errors name the file and what is wrong. `dtype`
/// gets the file's element type ("float32", "float64", "complex64").
seam::rt::Expected<seam::rt::HostTensor> readNpy(const std::string &path,
                                                 bool *isComplex = nullptr,
                                                 std::string *dtype = nullptr);
/// Writes float32 (or complex64 when `complex`, data interleaved). Errors
/// name the file.
seam::rt::Status writeNpy(const std::string &path,
                          const seam::rt::HostTensor &t, bool complex = false);

} // namespace seamrun

#endif
