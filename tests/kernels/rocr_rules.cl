// Kernels and variables for ROCr's loader rules (tests/fixtures/rocr, scripts/gen-rocr-fixtures.sh):
// an exported variable read through a GOT slot (an R_AMDGPU_ABS64 against a defined OBJECT),
// two kernels. Built as is, with a non-zero image base, stripped of .symtab, and patched.
__attribute__((visibility("default"))) global int rr_counter = 1;

kernel void rr_fill(global int *out, int n) {
  int i = (int)(__builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 64);
  if (i < n) out[i] = i + rr_counter;
}

kernel void rr_add(global int *out, int value) { out[0] += value + rr_counter; }
