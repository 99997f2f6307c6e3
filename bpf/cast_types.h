/* The kernel types the BPF programs cast plain pointers to (bpf_rdonly_cast), shared between them
 * and user space. A cast needs the kernel's own BTF id of its type. CO-RE gives it when libbpf
 * relocates against the kernel's whole BTF; against the minimal BTF kernel_object caches (a few
 * hundred types, src/probe/core_btf.cpp) CO-RE would give that file's ids, so user space then
 * sets them in .rodata (dc_cast_ids) from the kernel's BTF, read once when the cache is made. */
#ifndef DATACRUMBS_CAST_TYPES_H
#define DATACRUMBS_CAST_TYPES_H

/* X(enum suffix, struct name). A cast to a type not listed here does not compile. */
#define DC_CAST_TYPE_TABLE(X)     \
  X(TASK, task_struct)            \
  X(FILE, file)                   \
  X(INODE, inode)                 \
  X(DENTRY, dentry)               \
  X(KIOCB, kiocb)                 \
  X(ADDRESS_SPACE, address_space) \
  X(FOLIO, folio)                 \
  X(REQUEST, request)             \
  X(VM_AREA, vm_area_struct)      \
  X(MM, mm_struct)                \
  X(BINPRM, linux_binprm)         \
  X(JOURNAL, journal_s)

enum dc_cast_type {
#define DC_CAST_ENUM(suffix, name) DC_CAST_##suffix,
  DC_CAST_TYPE_TABLE(DC_CAST_ENUM)
#undef DC_CAST_ENUM
      DC_CAST_COUNT
};

#endif
