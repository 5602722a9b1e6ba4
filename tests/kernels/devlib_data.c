// Bare code object exporting a global variable (default visibility).
__attribute__((visibility("default"))) int dl_table[16] = {1, 2, 3, 4, 5, 6, 7, 8,
                                                           9, 10, 11, 12, 13, 14, 15, 16};
