# lit configuration of stencilc. test/dsl-examples links to ../dsl-examples,
# so every example runs as a test next to the tests of test/.
import os
import shutil
import subprocess

import lit.formats

config.name = "stencilc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".st", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.stencilc_obj_root, "test")

# GoogleTest runs as its own suite (unit/), the fuzzer from .ci/run, and
# test/cmake from its own script.
config.excludes = ["unit", "fuzz", "cmake", "Inputs"]

tools = os.path.join(config.stencilc_obj_root, "tools")
config.substitutions.append(("%stencilc", os.path.join(tools, "stencilc", "stencilc")))
config.substitutions.append(("%stencil-interp", os.path.join(tools, "stencil-interp", "stencil-interp")))
config.substitutions.append(("%stencil-opt", os.path.join(tools, "stencil-opt", "stencil-opt")))
config.substitutions.append(("%stencil-lift", os.path.join(tools, "stencil-lift", "stencil-lift")))
# stencil-probe is built only where CMake found a CUDA compiler.
stencil_probe = os.path.join(tools, "stencil-probe", "stencil-probe")
config.substitutions.append(("%stencil-probe", stencil_probe))
if os.path.exists(stencil_probe):
    config.available_features.add("stencil-probe")
config.environment["PATH"] = os.pathsep.join([
    os.path.join(tools, "stencilc"), os.path.join(tools, "stencil-interp"),
    config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%runtime_include",
                             os.path.join(config.stencilc_src_root, "runtime", "include")))
config.substitutions.append(("%examples", os.path.join(config.stencilc_src_root, "dsl-examples")))

# nvcc compiles generated code here; a GPU runs it only where one exists.
if config.nvcc and os.path.exists(config.nvcc):
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc-bare", config.nvcc + " -Werror all-warnings"))
    config.substitutions.append(("%nvcc-path", config.nvcc))
    config.substitutions.append(("%nvcc", config.nvcc + " -std=c++17 -Werror all-warnings -I" +
                                 os.path.join(config.stencilc_src_root, "runtime", "include")))
# Generated code also runs on the CPU through test/emulation, with a host
# C++ compiler and the CUDA headers (no GPU, no nvcc needed).
cuda_include = None
for candidate in [os.path.join(os.path.dirname(os.path.dirname(config.nvcc)), "include")
                  if config.nvcc else "", "/usr/local/cuda/include"]:
    if candidate and os.path.exists(os.path.join(candidate, "cuda_runtime.h")):
        cuda_include = candidate
        break
host_cxx = shutil.which("g++") or shutil.which("c++")
if cuda_include and host_cxx:
    config.available_features.add("cuda-headers")
    config.substitutions.append(("%emucxx", " ".join([
        host_cxx, "-std=c++20", "-O1", "-x", "c++", "-DSTENCILC_EMULATE",
        "-include", os.path.join(config.stencilc_src_root, "test", "emulation",
                                 "stencilc", "emulation.h"),
        "-I" + cuda_include,
        "-I" + os.path.join(config.stencilc_src_root, "runtime", "include"),
        # The star kernel's CUtensorMap parameter is 128-byte aligned, of
        # which GCC notes an ABI change of version 4.6.
        "-pthread", "-Wno-psabi"])))
    # Plain host C++ with the CUDA headers and warnings as errors: what a
    # .cpp that includes a runtime header's host part is compiled with.
    config.substitutions.append(("%hostcxx", " ".join([
        host_cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-x", "c++",
        "-I" + cuda_include,
        "-I" + os.path.join(config.stencilc_src_root, "runtime", "include")])))

# MPI runs several processes of generated code on the CPU, each rank's
# kernels through the emulation (test/CodeGen/distributed). OpenMPI is told
# to oversubscribe the cores, to run as root where CI does, and to copy
# between processes without cross-memory attach, which containers forbid.
if config.mpiexec and "cuda-headers" in config.available_features:
    config.available_features.add("mpi")
    emucxx = dict(config.substitutions)["%emucxx"]
    config.substitutions.append(("%mpiemucxx", emucxx + " " + config.mpi_compile))
    # After the sources: the libraries are no C++ (%emucxx says -x c++).
    config.substitutions.append(("%mpilibs", "-x none " + config.mpi_link))
    launcher = [config.mpiexec]
    try:
        version = subprocess.run([config.mpiexec, "--version"], capture_output=True,
                                 text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        version = ""
    if "Open MPI" in version or "OpenRTE" in version:
        launcher += ["--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none"]
        # A session directory of each test's own: in the shared TMPDIR, one
        # test's mpiexec, ending, removed the directory another's was
        # creating its own in (orte_init failed; CI, session 15). %t is
        # substituted after this.
        launcher += ["--mca", "orte_tmpdir_base", "%t.ompi"]
        if os.geteuid() == 0:
            launcher.append("--allow-run-as-root")
    config.substitutions.append(("%mpirun", " ".join(launcher)))
    config.substitutions.append(("%mpi-compile-flags", config.mpi_compile))
    config.substitutions.append(("%mpi-link-flags", config.mpi_link))
if config.nccl_flags:
    config.available_features.add("nccl")
    config.substitutions.append(("%nccl-flags", config.nccl_flags))

smi = shutil.which("nvidia-smi")
if smi:
    try:
        if subprocess.run([smi, "-L"], capture_output=True, timeout=30).returncode == 0:
            config.available_features.add("cuda-gpu")
    except (OSError, subprocess.TimeoutExpired):
        pass
