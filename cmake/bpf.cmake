# BPF objects: bpf/<name>.bpf.c -> <name>.bpf.o (clang, CO-RE) -> <name>.skel.h (bpftool).
# vmlinux.h is generated from the running kernel's BTF; CO-RE relocations make the objects
# portable to other kernels.
find_program(BPF_CLANG clang REQUIRED)
find_program(BPFTOOL bpftool REQUIRED)

set(DATACRUMBS_BPF_OUT ${CMAKE_BINARY_DIR}/bpf)
file(MAKE_DIRECTORY ${DATACRUMBS_BPF_OUT})
set(DATACRUMBS_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH "kernel BTF used for vmlinux.h")

add_custom_command(
  OUTPUT ${DATACRUMBS_BPF_OUT}/vmlinux.h
  COMMAND ${BPFTOOL} btf dump file ${DATACRUMBS_VMLINUX_BTF} format c > ${DATACRUMBS_BPF_OUT}/vmlinux.h
  COMMENT "Generating vmlinux.h from ${DATACRUMBS_VMLINUX_BTF}")

# x86-64 only, refused here rather than built wrong: the BPF programs read x86-64 registers by
# name (syscall arguments in di/si/dx/r10/r8/r9, orig_ax, sp) and the x86 page-fault tracepoints
# with their error code. (Syscall numbers come from the host's <sys/syscall.h> through
# src/core/syscall_table.cpp.)
execute_process(COMMAND uname -m OUTPUT_VARIABLE DATACRUMBS_ARCH OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT DATACRUMBS_ARCH STREQUAL "x86_64")
  message(FATAL_ERROR "DataCrumbs supports x86_64 only (this machine is ${DATACRUMBS_ARCH}): its BPF "
                      "programs read x86-64 registers and the x86 page-fault tracepoints.")
endif()
set(DATACRUMBS_BPF_ARCH x86)

add_library(datacrumbs_skeletons INTERFACE)
target_include_directories(datacrumbs_skeletons INTERFACE ${DATACRUMBS_BPF_OUT} ${CMAKE_SOURCE_DIR}/bpf)

function(datacrumbs_bpf_skeleton name)
  set(src ${CMAKE_SOURCE_DIR}/bpf/${name}.bpf.c)
  set(obj ${DATACRUMBS_BPF_OUT}/${name}.bpf.o)
  set(skel ${DATACRUMBS_BPF_OUT}/${name}.skel.h)
  add_custom_command(
    OUTPUT ${obj}
    # The headers it includes come from clang's dependency file: none can be forgotten.
    # -mcpu=v3: compare-and-swap and exchange (profile mode's per-thread slots, profile.bpf.h).
    COMMAND ${BPF_CLANG} -g -O2 -Wall -Werror -target bpf -mcpu=v3 -D__TARGET_ARCH_${DATACRUMBS_BPF_ARCH}
            -I${DATACRUMBS_BPF_OUT} -I${CMAKE_SOURCE_DIR}/bpf -MD -MF ${obj}.d -MT ${obj} -c ${src} -o ${obj}
    DEPENDS ${src} ${DATACRUMBS_BPF_OUT}/vmlinux.h
    DEPFILE ${obj}.d
    COMMENT "BPF ${name}.bpf.c")
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}
    DEPENDS ${obj}
    COMMENT "Skeleton ${name}.skel.h")
  add_custom_target(${name}_skel DEPENDS ${skel})
  add_dependencies(datacrumbs_skeletons ${name}_skel)
endfunction()
