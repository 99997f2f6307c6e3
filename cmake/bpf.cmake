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

execute_process(COMMAND uname -m OUTPUT_VARIABLE DATACRUMBS_ARCH OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REPLACE "x86_64" "x86" DATACRUMBS_BPF_ARCH ${DATACRUMBS_ARCH})
string(REPLACE "aarch64" "arm64" DATACRUMBS_BPF_ARCH ${DATACRUMBS_BPF_ARCH})

add_library(datacrumbs_skeletons INTERFACE)
target_include_directories(datacrumbs_skeletons INTERFACE ${DATACRUMBS_BPF_OUT} ${CMAKE_SOURCE_DIR}/bpf)

function(datacrumbs_bpf_skeleton name)
  set(src ${CMAKE_SOURCE_DIR}/bpf/${name}.bpf.c)
  set(obj ${DATACRUMBS_BPF_OUT}/${name}.bpf.o)
  set(skel ${DATACRUMBS_BPF_OUT}/${name}.skel.h)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${BPF_CLANG} -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_${DATACRUMBS_BPF_ARCH}
            -I${DATACRUMBS_BPF_OUT} -I${CMAKE_SOURCE_DIR}/bpf -c ${src} -o ${obj}
    DEPENDS ${src} ${CMAKE_SOURCE_DIR}/bpf/common.bpf.h ${CMAKE_SOURCE_DIR}/bpf/thread_state.bpf.h ${CMAKE_SOURCE_DIR}/bpf/task_record.bpf.h
            ${CMAKE_SOURCE_DIR}/bpf/events.h
            ${DATACRUMBS_BPF_OUT}/vmlinux.h
    COMMENT "BPF ${name}.bpf.c")
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}
    DEPENDS ${obj}
    COMMENT "Skeleton ${name}.skel.h")
  add_custom_target(${name}_skel DEPENDS ${skel})
  add_dependencies(datacrumbs_skeletons ${name}_skel)
endfunction()
