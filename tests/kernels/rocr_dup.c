// A second, weak definition of rocr_rules.cl's rr_counter: an ELF linker takes the strong one,
// ROCr refuses the second definition (HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED).
__attribute__((weak, visibility("default"))) int rr_counter = 2;
