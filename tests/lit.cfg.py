# lit configuration for seam: FileCheck tests of dialects, passes and tools.
import os
import lit.formats

config.name = "seam"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.seam_obj_root, "tests")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "runtime", "unit"]

config.environment["PATH"] = os.pathsep.join(
    [config.seam_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%seam_src", config.seam_src_root))
config.substitutions.append(("%shared", config.shared_dir))
