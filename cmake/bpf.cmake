# BPF objects: bpf/<name>.bpf.c -> <name>.bpf.o (clang, CO-RE) -> <name>.skel.h (bpftool).
# vmlinux.h is generated from the running kernel's BTF; CO-RE relocations make the objects
# portable to other kernels. Included only with DATACRUMBS_BPF=ON (the architecture is checked
# before, in CMakeLists.txt).
set(DATACRUMBS_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH "kernel BTF used for vmlinux.h")
find_program(BPF_CLANG clang)
find_program(BPFTOOL bpftool)
# Checked here, at configure time, with one line naming what is missing.
set(what_BPF_CLANG "clang (compiles bpf/*.bpf.c)")
set(what_BPFTOOL "bpftool (writes vmlinux.h and the skeletons)")
set(what_DATACRUMBS_VMLINUX_BTF "the kernel's BTF (vmlinux.h is generated from it)")
foreach(need BPF_CLANG BPFTOOL DATACRUMBS_VMLINUX_BTF)
  if(NOT ${need} OR NOT EXISTS "${${need}}")
    message(FATAL_ERROR "DATACRUMBS_BPF is ON but ${what_${need}} is missing (${need}=${${need}}): install "
                        "it (scripts/install-deps.sh), or configure with -DDATACRUMBS_BPF=OFF to build only the "
                        "modules that need no BPF and their unit tests.")
  endif()
endforeach()

set(DATACRUMBS_BPF_OUT ${CMAKE_BINARY_DIR}/bpf)
file(MAKE_DIRECTORY ${DATACRUMBS_BPF_OUT})
add_custom_command(
  OUTPUT ${DATACRUMBS_BPF_OUT}/vmlinux.h
  COMMAND ${BPFTOOL} btf dump file ${DATACRUMBS_VMLINUX_BTF} format c > ${DATACRUMBS_BPF_OUT}/vmlinux.h
  COMMENT "Generating vmlinux.h from ${DATACRUMBS_VMLINUX_BTF}")
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
