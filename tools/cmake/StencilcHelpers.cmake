# stencilc_add_library: stencil sources (.st) as a CUDA library target.
#
#   stencilc_add_library(<target> SOURCES a.st b.st
#                        [ARCH sm_80 sm_90 ...] [TARGET auto|cuda-core|tc|sptc]
#                        [PRECISION exact|split-tf32|tf32] [DISTRIBUTED]
#                        [OPTIONS <stencilc flags>...])
#
# Each .st file is compiled by its own custom command,
#   stencilc a.st -o <bin>/<target>.stencilc/a.cu --arch=... -MD -MF a.d
#            --write-if-changed <OPTIONS>
# whose depfile names the real inputs, and whose outputs keep their
# timestamps when their content is unchanged, so that nothing downstream
# rebuilds needlessly. <target> is a static library compiling the generated
# .cu files with the caller's CUDA compiler (the project must enable CUDA);
# the generated headers' directory is on its PUBLIC include path, so that
# `#include "a.h"` works in whatever links <target>, and it links
# Stencilc::runtime.
#
# ARCH: one or more of sm_80, sm_86, sm_89, sm_90, sm_100 and sm_120
# (default sm_90). It sets CUDA_ARCHITECTURES (80, 86, ...) and stencilc's
# --arch, the oldest of them: its code builds for a newer architecture whose
# blocks may hold the kernels' shared memory (sm_80 code for sm_90 and
# sm_100 always; for sm_86, sm_89 and sm_120 where the kernels take at most
# their 99 KB), and otherwise stops the build with an #error that says so.
# TARGET: stencilc's --target (auto, the default, lets the cost model
# choose; tc and sptc need linear stencils of one grid). PRECISION: the
# precision policy, stencilc's --precision (exact by default: f32 accuracy
# on CUDA cores or split-TF32 tensor cores; split-tf32 asks for the tensor
# cores; tf32 lets them round f32 grids' operands). Unknown values stop
# the configure with a message.
# DISTRIBUTED: stencilc --distributed, which adds run_distributed (one rank
# per GPU over MPI); the caller finds MPI first (find_package(MPI REQUIRED
# COMPONENTS CXX)) and <target> links MPI::MPI_CXX, and NCCL (Stencilc::nccl,
# found by stencilc_find_nccl) where it is found.
# OPTIONS go to stencilc verbatim (e.g. --fuse=4, --type=f64); give them last.
#
# The compiler run is Stencilc::stencilc: the imported one after
# find_package(Stencilc), this tree's own inside add_subdirectory. The cache
# variable STENCILC_EXECUTABLE, when set, overrides it (cross builds: a
# stencilc that runs on the build machine).
include_guard(GLOBAL)
cmake_policy(PUSH)
# Functions keep the policies in force where they are defined: CMP0116 (NEW:
# Ninja rewrites depfile paths relative to the build tree) among them.
cmake_policy(VERSION 3.20)

set(STENCILC_EXECUTABLE "" CACHE FILEPATH
  "stencilc run at build time by stencilc_add_library (empty: the Stencilc::stencilc target)")

# NCCL, for run_distributed's default transport: its header and library,
# from the CUDA toolkit, NCCL_ROOT / NCCL_HOME, or the nvidia-nccl-cu13
# wheel's folder. Defines the imported target Stencilc::nccl where both are
# found; without it run_distributed moves halos through MPI.
function(stencilc_find_nccl)
  if(TARGET Stencilc::nccl)
    return()
  endif()
  set(hints ${NCCL_ROOT} $ENV{NCCL_ROOT} $ENV{NCCL_HOME}
            ${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES}/.. /usr/local/cuda)
  find_path(STENCILC_NCCL_INCLUDE_DIR nccl.h HINTS ${hints}
    PATH_SUFFIXES include)
  find_library(STENCILC_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${hints}
    PATH_SUFFIXES lib lib64)
  if(STENCILC_NCCL_INCLUDE_DIR AND STENCILC_NCCL_LIBRARY)
    add_library(Stencilc::nccl UNKNOWN IMPORTED GLOBAL)
    set_target_properties(Stencilc::nccl PROPERTIES
      IMPORTED_LOCATION "${STENCILC_NCCL_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${STENCILC_NCCL_INCLUDE_DIR}"
      INTERFACE_COMPILE_DEFINITIONS STENCILC_WITH_NCCL)
  endif()
endfunction()

function(stencilc_add_library target)
  set(keywords SOURCES ARCH OPTIONS)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "DISTRIBUTED" "TARGET;PRECISION"
    "${keywords}")
  list(APPEND keywords TARGET PRECISION DISTRIBUTED)
  # An unknown keyword after a list keyword lands in that list, and after
  # TARGET's value among the unparsed arguments: find it by its shape (an
  # upper-case word), warn, and drop it with its values.
  if(ARG_UNPARSED_ARGUMENTS AND
     NOT ARG_UNPARSED_ARGUMENTS MATCHES "^[A-Z][A-Z0-9_]*(;|$)")
    message(WARNING "stencilc_add_library(${target}): unknown arguments "
      "ignored: ${ARG_UNPARSED_ARGUMENTS}; the keywords are ${keywords}")
  endif()
  foreach(kw IN ITEMS SOURCES ARCH OPTIONS UNPARSED_ARGUMENTS)
    set(kept)
    set(dropping FALSE)
    foreach(item IN LISTS ARG_${kw})
      if(item MATCHES "^[A-Z][A-Z0-9_]*$")
        set(dropping TRUE)
        message(WARNING "stencilc_add_library(${target}): unknown keyword "
          "${item} ignored with its values; the keywords are ${keywords}")
      elseif(NOT dropping)
        list(APPEND kept "${item}")
      endif()
    endforeach()
    set(ARG_${kw} "${kept}")
  endforeach()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "stencilc_add_library(${target}): give SOURCES a.st ...")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CUDA" IN_LIST languages)
    message(FATAL_ERROR "stencilc_add_library(${target}): enable CUDA first, "
      "e.g. project(<name> LANGUAGES CXX CUDA)")
  endif()

  # ARCH: CUDA_ARCHITECTURES and the code stencilc generates.
  if(NOT ARG_ARCH)
    set(ARG_ARCH sm_90)
  endif()
  set(cuda_archs)
  foreach(arch IN LISTS ARG_ARCH)
    if(NOT arch MATCHES "^sm_(80|86|89|90|100|120)$")
      message(FATAL_ERROR "stencilc_add_library(${target}): unsupported ARCH "
        "'${arch}'; expected sm_80, sm_86, sm_89, sm_90, sm_100 or sm_120")
    endif()
    list(APPEND cuda_archs "${CMAKE_MATCH_1}")
  endforeach()
  list(REMOVE_DUPLICATES cuda_archs)
  # Code runs on newer architectures only (sm_90 code may hold f64 MMA
  # shapes older ones lack): generate for the oldest.
  list(SORT cuda_archs COMPARE NATURAL)
  list(GET cuda_archs 0 oldest)
  set(stencilc_arch sm_${oldest})

  set(target_flag)
  if(DEFINED ARG_TARGET)
    if(NOT ARG_TARGET MATCHES "^(auto|cuda-core|tc|sptc)$")
      message(FATAL_ERROR "stencilc_add_library(${target}): unknown TARGET "
        "'${ARG_TARGET}'; expected auto, cuda-core, tc or sptc")
    endif()
    set(target_flag "--target=${ARG_TARGET}")
  endif()
  if(DEFINED ARG_PRECISION)
    if(NOT ARG_PRECISION MATCHES "^(exact|split-tf32|tf32)$")
      message(FATAL_ERROR "stencilc_add_library(${target}): unknown "
        "PRECISION '${ARG_PRECISION}'; expected exact, split-tf32 or tf32")
    endif()
    list(APPEND target_flag "--precision=${ARG_PRECISION}")
  endif()

  # The compiler: STENCILC_EXECUTABLE, else the Stencilc::stencilc target.
  if(STENCILC_EXECUTABLE)
    set(compiler "${STENCILC_EXECUTABLE}")
    set(compiler_dep "${STENCILC_EXECUTABLE}")
  elseif(TARGET Stencilc::stencilc)
    get_target_property(compiler Stencilc::stencilc ALIASED_TARGET)
    if(NOT compiler)
      set(compiler Stencilc::stencilc)
    endif()
    set(compiler_dep ${compiler})
  else()
    message(FATAL_ERROR "stencilc_add_library(${target}): no stencilc; call "
      "find_package(Stencilc) or set STENCILC_EXECUTABLE")
  endif()

  # DISTRIBUTED: run_distributed too, built against MPI (the caller's
  # find_package(MPI)) and NCCL where it is found.
  if(ARG_DISTRIBUTED)
    if(NOT TARGET MPI::MPI_CXX)
      message(FATAL_ERROR "stencilc_add_library(${target}): DISTRIBUTED "
        "needs MPI; call find_package(MPI REQUIRED COMPONENTS CXX) first")
    endif()
    list(APPEND target_flag --distributed)
  endif()

  set(outdir "${CMAKE_CURRENT_BINARY_DIR}/${target}.stencilc")
  file(MAKE_DIRECTORY "${outdir}")
  set(generated)
  set(names)
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(input "${src}" ABSOLUTE
      BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(name "${src}" NAME_WLE)
    if(name IN_LIST names)
      message(FATAL_ERROR "stencilc_add_library(${target}): two sources named "
        "${name}.st; their generated ${name}.h would collide")
    endif()
    list(APPEND names "${name}")
    set(cu "${outdir}/${name}.cu")
    set(h "${outdir}/${name}.h")
    set(d "${outdir}/${name}.d")
    add_custom_command(OUTPUT "${cu}" "${h}"
      COMMAND ${compiler} "${input}" -o "${cu}" --arch=${stencilc_arch}
              ${target_flag} -MD -MF "${d}" --write-if-changed ${ARG_OPTIONS}
      DEPENDS "${input}" ${compiler_dep}
      DEPFILE "${d}"
      COMMENT "stencilc ${src}"
      VERBATIM)
    list(APPEND generated "${cu}" "${h}")
  endforeach()

  add_library(${target} STATIC ${generated})
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${cuda_archs}")
  target_compile_features(${target} PRIVATE cuda_std_17)
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${outdir}>")
  # The generated headers include <cuda_runtime.h>, also from C++ sources.
  target_include_directories(${target} SYSTEM PUBLIC
    ${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES})
  target_link_libraries(${target} PUBLIC Stencilc::runtime)
  if(ARG_DISTRIBUTED)
    target_link_libraries(${target} PUBLIC MPI::MPI_CXX)
    stencilc_find_nccl()
    if(TARGET Stencilc::nccl)
      target_link_libraries(${target} PRIVATE Stencilc::nccl)
    endif()
  endif()
endfunction()

cmake_policy(POP)
