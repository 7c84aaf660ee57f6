//===- Registration.h - dialects and passes seam-run uses -------*- C++ -*-===//
#ifndef SEAM_TOOLS_SEAM_RUN_REGISTRATION_H
#define SEAM_TOOLS_SEAM_RUN_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace seamrun {
/// Registers (once) every pass seam-run parses by name and returns the
/// dialects it loads.
const mlir::DialectRegistry &seamRunRegistry();
} // namespace seamrun

#endif
