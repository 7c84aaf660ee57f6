//===- Report.h - seam-run: the report as text and as JSON ------*- C++ -*-===//
#ifndef SEAM_TOOLS_SEAM_RUN_REPORT_H
#define SEAM_TOOLS_SEAM_RUN_REPORT_H

#include "tools/seam-run/Session.h"
#include "llvm/Support/raw_ostream.h"

namespace seamrun {

/// The report seam-run prints; `quiet` leaves out the per-run lines.
void printReport(const SessionResult &r, llvm::raw_ostream &os, bool quiet);
/// Writes the result as JSON to `path`.
seam::rt::Status writeJson(const SessionResult &r, const std::string &path);

} // namespace seamrun

#endif
