//===- NcoreTargetPasses.td - ncore program emission ------*- tablegen -*-===//
//
// From a scheduled `ncore` program to the runtime's program file (or a dump
// of it). The translation itself is in NcoreEmit.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_LOWERING_TARGET_NCORETARGETPASSES_TD
#define SEAM_LOWERING_TARGET_NCORETARGETPASSES_TD

include "mlir/Pass/PassBase.td"

def NcoreEmit : Pass<"ncore-emit", "ModuleOp"> {
  let summary = "Write one runtime program file per ncore.program";
  let description = [{
    Emits every defined `ncore.program` in the module, nested modules
    included (after ncore-allocate, ncore-schedule and ncore-inline-calls),
    and writes
    `<dir>/<name>.seamprg`.
  }];
  let options = [
    Option<"dir", "dir", "std::string", "\".\"", "Output directory">,
    Option<"target", "target", "std::string", "\"trn1\"",
           "Target (trn1 or trn2) when the module has no ncore.target">
  ];
}

def NcoreDump : Pass<"ncore-dump", "ModuleOp"> {
  let summary = "Print the emitted runtime program of each ncore.program";
  let description = [{
    Emits every defined `ncore.program` and prints `rt::dumpProgram` of it
    to stdout (or `file`).
  }];
  let options = [
    Option<"target", "target", "std::string", "\"trn1\"",
           "Target (trn1 or trn2) when the module has no ncore.target">,
    Option<"file", "file", "std::string", "\"-\"",
           "Where to print (- for stdout)">
  ];
}

#endif // SEAM_LOWERING_TARGET_NCORETARGETPASSES_TD
