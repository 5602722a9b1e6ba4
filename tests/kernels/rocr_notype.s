// A defined symbol without a type (STT_NOTYPE) referenced by an R_AMDGPU_ABS64: ROCr looks such
// symbols up by name among the executable's symbols instead of using their value.
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1030"
  .data
  .globl rr_marker
rr_marker:
  .long 42
  .globl rr_marker_ptr
  .type rr_marker_ptr,@object
  .p2align 3
rr_marker_ptr:
  .quad rr_marker
  .size rr_marker_ptr, 8
